"""Deterministic, shardable data: synthetic tensors (default) or an image folder.

The order of samples is a pure function of ``(seed, epoch)``: every epoch draws one
permutation of all indices from a generator seeded with ``seed`` and ``epoch``; rank ``r`` of
``w`` takes ``perm[r::w]`` truncated to ``len // w`` (like ``DistributedSampler`` with
``drop_last``) and cuts it into full batches. So the data position of a run is fully described
by its global step: ``epoch = step // steps_per_epoch``, ``batch = step % steps_per_epoch``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import torch

from trainer.errors import UserError

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".ppm", ".pgm", ".tif")

Batch = tuple[torch.Tensor, torch.Tensor]


def epoch_permutation(n: int, seed: int, epoch: int) -> torch.Tensor:
    """The permutation of ``range(n)`` for one epoch (same on every rank)."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=g)


def shard_batches(
    n: int, seed: int, epoch: int, rank: int, world: int, batch_size: int
) -> list[torch.Tensor]:
    """Index batches of this rank for one epoch (full batches only)."""
    per_rank = n // world
    mine = epoch_permutation(n, seed, epoch)[rank::world][:per_rank]
    steps = per_rank // batch_size
    return [mine[i * batch_size : (i + 1) * batch_size] for i in range(steps)]


class DataSource:
    """Base: iterate over the batches of this rank from a data position."""

    size: int
    channels: int
    image_size: int
    num_classes: int

    def __init__(self, seed: int, rank: int, world: int, batch_size: int) -> None:
        self.seed, self.rank, self.world, self.batch_size = seed, rank, world, batch_size

    @property
    def steps_per_epoch(self) -> int:
        return (self.size // self.world) // self.batch_size

    def check(self) -> None:
        if self.steps_per_epoch == 0:
            raise UserError(
                f"data set of {self.size} samples gives no full batch of {self.batch_size} "
                f"per process on {self.world} process(es); lower --batch-size or add data"
            )

    def batches(self, epoch: int, start: int) -> Iterator[Batch]:
        raise NotImplementedError

    def close(self) -> None:
        """Release loader processes (nothing to do for in-memory data)."""


class SyntheticData(DataSource):
    """Random images and labels drawn once from the seed, kept on the training device."""

    def __init__(
        self,
        size: int,
        channels: int,
        image_size: int,
        num_classes: int,
        seed: int,
        rank: int,
        world: int,
        batch_size: int,
        device: torch.device,
    ) -> None:
        super().__init__(seed, rank, world, batch_size)
        self.size, self.channels = size, channels
        self.image_size, self.num_classes = image_size, num_classes
        g = torch.Generator().manual_seed(seed)
        # Drawn on the CPU so the data is the same whatever the device; moved once.
        self.images = torch.randn(size, channels, image_size, image_size, generator=g).to(device)
        self.labels = torch.randint(0, num_classes, (size,), generator=g).to(device)

    def batches(self, epoch: int, start: int) -> Iterator[Batch]:
        idx_batches = shard_batches(
            self.size, self.seed, epoch, self.rank, self.world, self.batch_size
        )
        for idx in idx_batches[start:]:
            idx = idx.to(self.images.device)
            yield self.images.index_select(0, idx), self.labels.index_select(0, idx)


class _FolderDataset(torch.utils.data.Dataset):
    def __init__(self, samples: list[tuple[str, int]], mode: str, image_size: int) -> None:
        self.samples, self.mode, self.image_size = samples, mode, image_size

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        from PIL import Image

        path, label = self.samples[i]
        try:
            with Image.open(path) as src:
                img = src.convert(self.mode).resize((self.image_size, self.image_size))
                raw = img.tobytes()
        except Exception as e:
            raise UserError(f"unreadable image {path}: {e}") from None
        c = 1 if self.mode == "L" else 3
        x = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
        x = x.view(self.image_size, self.image_size, c).permute(2, 0, 1).float()
        return (x / 127.5) - 1.0, label


class _IndexBatches(torch.utils.data.Sampler):
    """The batch sampler of the one persistent loader: set to an epoch's batches before each
    pass (the main process iterates it and hands the indices to the workers)."""

    def __init__(self) -> None:
        self.batches: list[torch.Tensor] = []

    def __iter__(self) -> Iterator[list[int]]:
        return (b.tolist() for b in self.batches)

    def __len__(self) -> int:
        return len(self.batches)


_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def _ignore_stop_signals(worker_id: int) -> None:
    """Loader workers leave SIGTERM/SIGINT to the main process.

    Kubernetes, and a plain ``torchrun``, signal every process of the container or group. A
    worker that died of it made the main process fail (exit 1, no checkpoint) or hang in the
    loader's shutdown. The workers start with both signals blocked (see ``_loader_iter``), so
    none can arrive before this runs; a signal that is pending by then is dropped.
    """
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


class ImageFolderData(DataSource):
    """``root/<class>/<image>``; classes are the sorted sub-folder names."""

    def __init__(
        self,
        root: str,
        channels: int,
        image_size: int,
        num_classes: int | None,
        seed: int,
        rank: int,
        world: int,
        batch_size: int,
        workers: int,
        pin_memory: bool,
    ) -> None:
        super().__init__(seed, rank, world, batch_size)
        try:
            import PIL  # noqa: F401
        except ImportError:
            raise UserError(
                "--data-dir needs Pillow: pip install 'pillow>=10' (or use synthetic data)"
            ) from None
        classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        if not classes:
            raise UserError(f"--data-dir {root!r} has no class sub-folders")
        samples: list[tuple[str, int]] = []
        for label, cls in enumerate(classes):
            folder = os.path.join(root, cls)
            for name in sorted(os.listdir(folder)):
                if name.lower().endswith(IMAGE_EXTENSIONS):
                    samples.append((os.path.join(folder, name), label))
        if not samples:
            raise UserError(f"--data-dir {root!r} has no images ({', '.join(IMAGE_EXTENSIONS)})")
        if num_classes is not None and num_classes != len(classes):
            raise UserError(
                f"--num-classes {num_classes} but --data-dir has {len(classes)} class folders"
            )
        self.classes = classes
        self.size, self.channels = len(samples), channels
        self.image_size, self.num_classes = image_size, len(classes)
        self.workers, self.pin_memory = workers, pin_memory
        self.dataset = _FolderDataset(samples, "L" if channels == 1 else "RGB", image_size)
        self._sampler = _IndexBatches()
        self._loader: torch.utils.data.DataLoader | None = None  # type: ignore[type-arg]
        self._started = False

    def _loader_iter(self) -> Iterator[Batch]:
        """An iterator of the one loader; its workers start once and persist across epochs.

        The loader draws its workers' base seed from a generator of its own, not from the
        global torch RNG, so creating it at another moment (in a resumed run) leaves the
        training's random stream (dropout) exactly as in an uninterrupted run.
        """
        if self._loader is None:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + self.rank)
            self._loader = torch.utils.data.DataLoader(
                self.dataset,
                batch_sampler=self._sampler,
                num_workers=self.workers,
                pin_memory=self.pin_memory,
                persistent_workers=self.workers > 0,
                worker_init_fn=_ignore_stop_signals if self.workers > 0 else None,
                generator=g,
            )
        if self.workers == 0 or self._started:
            return iter(self._loader)
        # Workers are forked here: with SIGTERM/SIGINT blocked until each ignores them.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            it = iter(self._loader)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a pending signal lands now
        self._started = True
        return it

    def batches(self, epoch: int, start: int) -> Iterator[Batch]:
        self._sampler.batches = shard_batches(
            self.size, self.seed, epoch, self.rank, self.world, self.batch_size
        )[start:]
        yield from self._loader_iter()

    def close(self) -> None:
        """Stop the persistent workers (also when a stop left an epoch half read)."""
        loader, self._loader, self._started = self._loader, None, False
        iterator = getattr(loader, "_iterator", None)
        if iterator is not None and hasattr(iterator, "_shutdown_workers"):
            iterator._shutdown_workers()
