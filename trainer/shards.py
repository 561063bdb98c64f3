"""WebDataset-style tar shards read straight from object storage, with an exact resume.

``--data-dir s3://bucket/prefix`` (or ``oss://``, ``cosn://``, ``tos://``, or a local folder
holding a ``shardindex.json``) trains on tar shards: each sample is a run of members sharing a key
(``000123.jpg`` + ``000123.cls``, the WebDataset convention), the ``.cls`` member an integer
label. ``shardindex.json`` is a wids shard index (``__kind__: wids-shard-index-v1``,
``shardlist: [{url, nsamples, filesize}]``) with two additions of this trainer: each shard's
``gpuinfra_offsets`` (the byte offset of every sample in the tar, and the end of the last) and
the index's ``gpuinfra_classes``. ``python -m trainer.shards write`` makes such shards from an
image folder; ``python -m trainer.shards index URI`` adds the offsets to shards made elsewhere.

**Order and resume.** The trainer's guarantee holds as for image folders: the data position
is the number of samples of the epoch used so far. Each shard is cut into blocks of
``BLOCK`` consecutive samples; each epoch is one permutation of all blocks, drawn from
``(seed, epoch)``, read block after block. Optimizer step ``k`` uses samples
``[k*G, (k+1)*G)`` of that sequence (``G`` the global batch), cut into ``accum`` rounds of
``w x B``; in round ``m`` rank ``r`` of ``w`` takes the ``r``-th ``B`` of that round's samples
(contiguous, so they stay few ranged reads). So a step's samples depend only on ``G``, never on
the world size or the number of accumulation rounds, and a resumed run continues at sample
``k*G``. Why not webdataset's own loaders: its iterable
pipeline has no sample position to resume at, and ``wids`` downloads whole shards to a local
cache first.

**What is read.** A rank's ``B`` samples are a few runs of consecutive samples in a few
shards: one ranged GET per run (``B / BLOCK + 1`` per batch), of exactly the bytes of those
samples, fetched concurrently, in DataLoader worker processes (``--workers``, pinned memory on
CUDA). Samples inside a block stay in the order they were written: write shards shuffled
(``write`` does).
"""

from __future__ import annotations

import argparse
import bisect
import io
import itertools
import json
import logging
import os
import random
import signal
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from trainer.data import (
    _STOP_SIGNALS,
    IMAGE_EXTENSIONS,
    Batch,
    DataSource,
    Step,
    _ignore_stop_signals,
    epoch_permutation,
)
from trainer.errors import UserError
from trainer.remote import RemoteOptions, is_remote, open_remote

log = logging.getLogger("trainer")

INDEX = "shardindex.json"
KIND = "wids-shard-index-v1"
BLOCK = 32
"""Consecutive samples read together. Part of the data order: changing it changes which
samples a step trains on, so it is a constant (kept in the index's checks, not a flag)."""
LABEL_EXT = "cls"
_IMAGE_EXTS = tuple(e.lstrip(".") for e in IMAGE_EXTENSIONS)


@dataclass(frozen=True)
class Shard:
    path: str
    """In the file system of the index (bucket/prefix/shard-000000.tar, or a local path)."""
    nsamples: int
    offsets: tuple[int, ...]
    """``nsamples + 1`` byte offsets: sample ``i`` is ``[offsets[i], offsets[i+1])``."""


@dataclass(frozen=True)
class ShardIndex:
    shards: tuple[Shard, ...]
    classes: tuple[str, ...] | None

    @property
    def size(self) -> int:
        return sum(s.nsamples for s in self.shards)


def is_shard_dataset(data_dir: str) -> bool:
    """A URI (object storage is read as shards), or a local folder with a shard index."""
    if is_remote(data_dir):
        return True
    return os.path.isfile(os.path.join(data_dir, INDEX)) or data_dir.endswith(".json")


def _index_location(data_dir: str) -> tuple[str, str]:
    """(the index file, the folder shard URLs are relative to)."""
    if data_dir.endswith(".json"):
        return data_dir, data_dir.rsplit("/", 1)[0]
    base = data_dir.rstrip("/")
    return f"{base}/{INDEX}", base


class _Files:
    """Ranged reads from local files or one object store (made lazily in each process:
    fsspec's async file systems are not fork-safe)."""

    def __init__(self, remote: bool, options: RemoteOptions, uri: str) -> None:
        self.remote, self.options, self.uri = remote, options, uri
        self._fs: Any = None
        self._pid = -1

    def fs(self) -> Any:
        if self._pid != os.getpid():
            self._fs, _ = open_remote(self.uri, "--data-dir", self.options)
            self._pid = os.getpid()
        return self._fs

    def read(self, path: str) -> bytes:
        if not self.remote:
            with open(path, "rb") as f:
                return f.read()
        return bytes(self.fs().cat_file(path))

    def ranges(self, paths: list[str], starts: list[int], ends: list[int]) -> list[bytes]:
        if not self.remote:
            out = []
            for path, start, end in zip(paths, starts, ends, strict=True):
                with open(path, "rb") as f:
                    f.seek(start)
                    out.append(f.read(end - start))
            return out
        return [bytes(b) for b in self.fs().cat_ranges(paths, starts, ends, on_error="raise")]


def load_index(data_dir: str, options: RemoteOptions) -> tuple[ShardIndex, _Files]:
    remote = is_remote(data_dir)
    index_uri, folder = _index_location(data_dir)
    files = _Files(remote, options, data_dir)
    # paths inside the file system: `bucket/prefix` (as FsspecStorage.base) or local paths
    base = folder.split("://", 1)[1] if remote else folder
    index_path = index_uri.split("://", 1)[1] if remote else index_uri
    try:
        raw = json.loads(files.read(index_path))
    except FileNotFoundError:
        raise UserError(
            f"--data-dir {data_dir}: no {INDEX} there; make shards with `python -m trainer.shards "
            "write`, or index existing ones with `python -m trainer.shards index`"
        ) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise UserError(f"--data-dir {data_dir}: {INDEX} is not JSON: {e}") from None
    return parse_index(raw, base, data_dir), files


def parse_index(raw: Any, base: str, where: str) -> ShardIndex:
    if not isinstance(raw, dict) or raw.get("__kind__") != KIND:
        raise UserError(f"--data-dir {where}: {INDEX} is not a {KIND} shard index")
    shards = []
    for i, entry in enumerate(raw.get("shardlist") or []):
        offsets = entry.get("gpuinfra_offsets") if isinstance(entry, dict) else None
        n = entry.get("nsamples") if isinstance(entry, dict) else None
        url = entry.get("url") if isinstance(entry, dict) else None
        if not isinstance(url, str) or not isinstance(n, int) or n < 0:
            raise UserError(f"--data-dir {where}: shardlist[{i}] needs url and nsamples")
        if not isinstance(offsets, list) or len(offsets) != n + 1:
            raise UserError(
                f"--data-dir {where}: shardlist[{i}] ({url}) has no sample offsets; run "
                f"`python -m trainer.shards index {where}`"
            )
        if any(b <= a for a, b in itertools.pairwise(offsets)):
            raise UserError(f"--data-dir {where}: shardlist[{i}] offsets do not increase")
        path = url if "://" in url or url.startswith("/") else f"{base}/{url}"
        shards.append(Shard(path, n, tuple(int(o) for o in offsets)))
    if not shards:
        raise UserError(f"--data-dir {where}: {INDEX} lists no shards")
    classes = raw.get("gpuinfra_classes")
    return ShardIndex(tuple(shards), tuple(classes) if isinstance(classes, list) else None)


# --------------------------------------------------------------------------- the data order


@dataclass(frozen=True)
class Run:
    """Consecutive samples ``[start, end)`` of one shard."""

    shard: int
    start: int
    end: int


class EpochOrder:
    """The blocks of one epoch in order, and which runs a range of positions covers."""

    def __init__(self, index: ShardIndex, seed: int, epoch: int) -> None:
        blocks = [
            Run(i, s, min(s + BLOCK, shard.nsamples))
            for i, shard in enumerate(index.shards)
            for s in range(0, shard.nsamples, BLOCK)
        ]
        perm = epoch_permutation(len(blocks), seed, epoch).tolist()
        self.blocks = [blocks[j] for j in perm]
        self.starts: list[int] = []
        position = 0
        for block in self.blocks:
            self.starts.append(position)
            position += block.end - block.start

    def runs(self, lo: int, hi: int) -> list[Run]:
        """The samples at positions ``[lo, hi)`` of the epoch, as runs in that order."""
        out = []
        i = bisect.bisect_right(self.starts, lo) - 1
        while lo < hi:
            block, first = self.blocks[i], self.starts[i]
            start = block.start + (lo - first)
            end = min(block.end, start + (hi - lo))
            out.append(Run(block.shard, start, end))
            lo += end - start
            i += 1
        return out


def rank_positions(
    step: int, rank: int, world: int, batch_size: int, accum: int = 1, micro: int = 0
) -> tuple[int, int]:
    """This rank's samples of accumulation round ``micro`` of optimizer step ``step`` of an
    epoch: the ``rank``-th batch of that round's ``world * batch_size`` samples. The step's
    ``accum * world * batch_size`` samples do not depend on the split."""
    per_round = world * batch_size
    lo = step * per_round * accum + micro * per_round + rank * batch_size
    return lo, lo + batch_size


# --------------------------------------------------------------------------- decoding


def _key_ext(name: str) -> tuple[str, str]:
    """WebDataset's split: the key is the path up to the first '.' of the file name."""
    folder, _, file = name.rpartition("/")
    stem, dot, ext = file.partition(".")
    return (f"{folder}/{stem}" if folder else stem), ext.lower() if dot else ""


def samples_of(blob: bytes) -> list[dict[str, bytes]]:
    """The samples of a byte range that starts at a sample's first header: extension -> data."""
    out: list[dict[str, bytes]] = []
    last_key = None
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:") as tar:
        for member in tar:
            if not member.isfile():
                continue
            key, ext = _key_ext(member.name)
            f = tar.extractfile(member)
            data = f.read() if f is not None else b""
            if key != last_key:
                out.append({})
                last_key = key
            out[-1][ext] = data
    return out


class _ShardDataset(torch.utils.data.Dataset):
    """Item ``(epoch, step, round)``: this rank's micro-batch of that accumulation round of
    that step, decoded (``(epoch, step)``: round 0)."""

    def __init__(
        self,
        index: ShardIndex,
        files: _Files,
        seed: int,
        rank: int,
        world: int,
        batch_size: int,
        channels: int,
        image_size: int,
        num_classes: int,
        accum: int = 1,
    ) -> None:
        self.index, self.files = index, files
        self.seed, self.rank, self.world, self.batch_size = seed, rank, world, batch_size
        self.accum = accum
        self.mode = "L" if channels == 1 else "RGB"
        self.channels, self.image_size, self.num_classes = channels, image_size, num_classes
        self._order: EpochOrder | None = None
        self._order_epoch = -1

    def order(self, epoch: int) -> EpochOrder:
        if self._order_epoch != epoch:
            self._order, self._order_epoch = EpochOrder(self.index, self.seed, epoch), epoch
        assert self._order is not None
        return self._order

    def __len__(self) -> int:  # the sampler decides; required by the Dataset protocol
        return 0

    def __getitem__(self, item: tuple[int, ...]) -> Batch:
        epoch, step, *rest = item
        lo, hi = rank_positions(
            step, self.rank, self.world, self.batch_size, self.accum, rest[0] if rest else 0
        )
        runs = self.order(epoch).runs(lo, hi)
        shards = [self.index.shards[r.shard] for r in runs]
        blobs = self.files.ranges(
            [s.path for s in shards],
            [s.offsets[r.start] for s, r in zip(shards, runs, strict=True)],
            [s.offsets[r.end] for s, r in zip(shards, runs, strict=True)],
        )
        xs, ys = [], []
        for shard, run, blob in zip(shards, runs, blobs, strict=True):
            samples = samples_of(blob)
            if len(samples) != run.end - run.start:
                raise UserError(
                    f"{shard.path}: {len(samples)} samples at bytes {shard.offsets[run.start]}-"
                    f"{shard.offsets[run.end]}, the index says {run.end - run.start}; the shard "
                    "changed since it was indexed: run `python -m trainer.shards index` again"
                )
            for sample in samples:
                x, y = self._decode(sample, shard.path)
                xs.append(x)
                ys.append(y)
        return torch.stack(xs), torch.tensor(ys, dtype=torch.long)

    def _decode(self, sample: dict[str, bytes], where: str) -> tuple[torch.Tensor, int]:
        from PIL import Image

        image = next((sample[e] for e in _IMAGE_EXTS if e in sample), None)
        if image is None or LABEL_EXT not in sample:
            raise UserError(
                f"{where}: a sample has {sorted(sample)}; it needs an image "
                f"({', '.join(_IMAGE_EXTS)}) and a .{LABEL_EXT} label"
            )
        try:
            label = int(sample[LABEL_EXT].decode().strip())
            with Image.open(io.BytesIO(image)) as src:
                img = src.convert(self.mode).resize((self.image_size, self.image_size))
                raw = img.tobytes()
        except Exception as e:
            raise UserError(f"{where}: unreadable sample: {e}") from None
        if not 0 <= label < self.num_classes:
            raise UserError(f"{where}: label {label} outside 0..{self.num_classes - 1}")
        x = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
        x = x.view(self.image_size, self.image_size, self.channels).permute(2, 0, 1).float()
        return (x / 127.5) - 1.0, label


class _Steps(torch.utils.data.Sampler):
    """The persistent loader's sampler: ``(epoch, step, round)`` items of one pass."""

    def __init__(self) -> None:
        self.items: list[tuple[int, int, int]] = []

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        return iter(list(self.items))

    def __len__(self) -> int:
        return len(self.items)


class ShardData(DataSource):
    """Tar shards from ``--data-dir`` (object storage or a local folder with an index)."""

    def __init__(
        self,
        data_dir: str,
        channels: int,
        image_size: int,
        num_classes: int | None,
        seed: int,
        rank: int,
        world: int,
        batch_size: int,
        accum: int,
        workers: int,
        pin_memory: bool,
        options: RemoteOptions,
    ) -> None:
        super().__init__(seed, rank, world, batch_size, accum)
        try:
            import PIL  # noqa: F401
        except ImportError:
            raise UserError("tar shards need Pillow: pip install 'pillow>=10'") from None
        index, files = load_index(data_dir, options)
        if index.classes is not None:
            if num_classes is not None and num_classes != len(index.classes):
                raise UserError(
                    f"--num-classes {num_classes} but {INDEX} names {len(index.classes)} classes"
                )
            num_classes = len(index.classes)
        if num_classes is None:
            raise UserError(f"{INDEX} names no classes (gpuinfra_classes): set --num-classes")
        self.index = index
        self.size, self.channels = index.size, channels
        self.image_size, self.num_classes = image_size, num_classes
        self.arch = {"channels": channels, "image_size": image_size, "num_classes": num_classes}
        self.workers, self.pin_memory = workers, pin_memory
        self.dataset = _ShardDataset(
            index, files, seed, rank, world, batch_size, channels, image_size, num_classes, accum
        )
        self._sampler = _Steps()
        self._loader: torch.utils.data.DataLoader | None = None  # type: ignore[type-arg]
        self._started = False

    def _loader_iter(self) -> Iterator[Batch]:
        """One persistent loader, as ImageFolderData's (workers forked with the stop signals
        blocked, ignoring them; its own generator, so the training's RNG stream is untouched)."""
        if self._loader is None:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + self.rank)
            self._loader = torch.utils.data.DataLoader(
                self.dataset,
                batch_size=None,
                sampler=self._sampler,
                num_workers=self.workers,
                pin_memory=self.pin_memory,
                persistent_workers=self.workers > 0,
                worker_init_fn=_ignore_stop_signals if self.workers > 0 else None,
                generator=g,
            )
        if self.workers == 0 or self._started:
            return iter(self._loader)
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            it = iter(self._loader)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        self._started = True
        return it

    def steps(self, epoch: int, start: int) -> Iterator[Step]:
        self._sampler.items = [
            (epoch, k, m) for k in range(start, self.steps_per_epoch) for m in range(self.accum)
        ]
        step: Step = []
        for x, y in self._loader_iter():
            step.append((x, y))
            if len(step) == self.accum:
                yield step
                step = []

    def close(self) -> None:
        loader, self._loader, self._started = self._loader, None, False
        iterator = getattr(loader, "_iterator", None)
        if iterator is not None and hasattr(iterator, "_shutdown_workers"):
            iterator._shutdown_workers()


# --------------------------------------------------------------------------- making shards


def _tarinfo(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)  # mtime 0, mode 0644, uid 0: the same bytes every time
    info.size = size
    return info


def write_tar(path: str, samples: Sequence[tuple[str, dict[str, bytes]]]) -> list[int]:
    """A tar of ``(key, {ext: data})`` samples; returns the sample offsets (n + 1)."""
    offsets = []
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for key, members in samples:
            offsets.append(tar.offset)
            for ext, data in members.items():
                tar.addfile(_tarinfo(f"{key}.{ext}", len(data)), io.BytesIO(data))
        offsets.append(tar.offset)
    return offsets


def scan_offsets(fileobj: Any) -> tuple[int, list[int]]:
    """Sample count and offsets of a tar read front to back (members of one key are one
    sample, as WebDataset groups them)."""
    offsets: list[int] = []
    end = 0
    last_key = None
    with tarfile.open(fileobj=fileobj, mode="r|") as tar:
        for member in tar:
            if not member.isfile():
                continue
            key, _ = _key_ext(member.name)
            if key != last_key:
                offsets.append(member.offset)
                last_key = key
            end = member.offset_data + -(-member.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
    return len(offsets), [*offsets, end]


def write_shards(
    folder: str,
    dest: str,
    samples_per_shard: int = 1000,
    seed: int = 0,
    options: RemoteOptions | None = None,
) -> dict[str, Any]:
    """Shards of an image folder (``root/<class>/<image>``), samples shuffled once from
    ``seed``, and their index written last; ``dest`` is a folder or a bucket URI."""
    classes = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
    items = [
        (os.path.join(folder, c, name), label)
        for label, c in enumerate(classes)
        for name in sorted(os.listdir(os.path.join(folder, c)))
        if name.lower().endswith(IMAGE_EXTENSIONS)
    ]
    if not items:
        raise UserError(f"--from {folder!r} has no images in class sub-folders")
    random.Random(seed).shuffle(items)
    remote = is_remote(dest)
    fs, base = (
        open_remote(dest, "--to", options or RemoteOptions.from_env()) if remote else (None, dest)
    )
    if not remote:
        os.makedirs(dest, exist_ok=True)
    shardlist = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, first in enumerate(range(0, len(items), samples_per_shard)):
            chunk = items[first : first + samples_per_shard]
            name = f"shard-{n:06d}.tar"
            samples = []
            for i, (path, label) in enumerate(chunk):
                ext = os.path.splitext(path)[1].lstrip(".").lower()
                with open(path, "rb") as f:
                    samples.append(
                        (f"{first + i:09d}", {ext: f.read(), LABEL_EXT: str(label).encode()})
                    )
            local = os.path.join(tmp if remote else dest, name)
            offsets = write_tar(local, samples)
            size = os.path.getsize(local)
            if remote:
                fs.put_file(local, f"{base}/{name}")
                os.unlink(local)
            shardlist.append(
                {"url": name, "nsamples": len(chunk), "filesize": size, "gpuinfra_offsets": offsets}
            )
        index = {
            "__kind__": KIND,
            "wids_version": 1,
            "name": os.path.basename(folder.rstrip("/")),
            "shardlist": shardlist,
            "gpuinfra_classes": classes,
        }
        _put_index(index, fs, base, tmp if remote else dest)
    return index


def _put_index(index: dict[str, Any], fs: Any, base: str, folder: str) -> None:
    local = os.path.join(folder, INDEX)
    with open(local + ".tmp", "w") as f:
        json.dump(index, f)
    os.replace(local + ".tmp", local)
    if fs is not None:
        fs.put_file(local, f"{base}/{INDEX}")


def index_shards(
    uri: str, classes: list[str] | None, options: RemoteOptions | None = None
) -> dict[str, Any]:
    """Add sample offsets to the ``*.tar`` shards under ``uri`` (read once, front to back)."""
    remote = is_remote(uri)
    if remote:
        fs, base = open_remote(uri, "index", options or RemoteOptions.from_env())
        names = sorted(p.rsplit("/", 1)[-1] for p in fs.find(base) if p.endswith(".tar"))
    else:
        fs, base = None, uri
        names = sorted(n for n in os.listdir(uri) if n.endswith(".tar"))
    if not names:
        raise UserError(f"{uri} holds no .tar shards")
    shardlist = []
    for name in names:
        path = f"{base}/{name}"
        with fs.open(path, "rb") if fs is not None else open(path, "rb") as f:
            n, offsets = scan_offsets(f)
        size = fs.size(f"{base}/{name}") if fs is not None else os.path.getsize(f"{base}/{name}")
        shardlist.append(
            {"url": name, "nsamples": n, "filesize": size, "gpuinfra_offsets": offsets}
        )
    index: dict[str, Any] = {"__kind__": KIND, "wids_version": 1, "shardlist": shardlist}
    if classes:
        index["gpuinfra_classes"] = classes
    with tempfile.TemporaryDirectory() as tmp:
        _put_index(index, fs, base, tmp if fs is not None else uri)
    return index


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m trainer.shards")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="tar shards and their index from an image folder")
    w.add_argument("--from", dest="source", required=True)
    w.add_argument("--to", dest="dest", required=True, help="a folder or a bucket URI")
    w.add_argument("--samples-per-shard", type=int, default=1000)
    w.add_argument("--seed", type=int, default=0)
    x = sub.add_parser("index", help="add sample offsets to existing shards")
    x.add_argument("uri")
    x.add_argument("--classes", help="comma-separated class names (label i = the i-th)")
    args = p.parse_args(argv)
    try:
        if args.command == "write":
            index = write_shards(args.source, args.dest, args.samples_per_shard, args.seed)
        else:
            classes = args.classes.split(",") if args.classes else None
            index = index_shards(args.uri, classes)
    except UserError as e:
        print(f"trainer.shards: error: {e}", file=sys.stderr)
        return 64
    total = sum(s["nsamples"] for s in index["shardlist"])
    print(f"{len(index['shardlist'])} shards, {total} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
