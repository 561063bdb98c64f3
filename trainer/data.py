"""Deterministic, shardable data: synthetic images (default), synthetic tokens (``gpt``) or an
image folder.

The order of samples is a pure function of ``(seed, epoch)``: every epoch draws one
permutation of all indices from a generator seeded with ``seed`` and ``epoch``. Optimizer step
``k`` of an epoch uses the permutation's ``k``-th slice of ``G`` samples, ``G`` the global
batch. The slice is cut into ``accum`` rounds of ``world x batch``; in each round rank ``r`` of
``w`` takes every ``w``-th sample from ``r`` (like ``DistributedSampler``). So the samples of a
step depend only on ``G``, not on how it is split into processes and accumulation rounds, and
the data position of a run is its global step: ``epoch = step // steps_per_epoch``,
``batch = step % steps_per_epoch``, ``samples seen in the epoch = batch * G``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import torch

from trainer.errors import UserError

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".ppm", ".pgm", ".tif")

Batch = tuple[torch.Tensor, torch.Tensor]
Step = list[Batch]
"""The micro-batches of one optimizer step on this rank (one per accumulation round)."""


def epoch_permutation(n: int, seed: int, epoch: int) -> torch.Tensor:
    """The permutation of ``range(n)`` for one epoch (same on every rank)."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=g)


def shard_batches(
    n: int, seed: int, epoch: int, rank: int, world: int, batch_size: int, accum: int = 1
) -> list[list[torch.Tensor]]:
    """Index micro-batches of this rank for one epoch: one list of ``accum`` per step (full
    steps only). With ``accum=1`` rank ``r`` takes ``perm[r::world]`` in batches, as
    ``DistributedSampler`` with ``drop_last`` does."""
    per_round = world * batch_size
    global_batch = per_round * accum
    perm = epoch_permutation(n, seed, epoch)
    steps = []
    for k in range(n // global_batch):
        chunk = perm[k * global_batch : (k + 1) * global_batch]
        steps.append(
            [chunk[m * per_round : (m + 1) * per_round][rank::world] for m in range(accum)]
        )
    return steps


def step_samples(n: int, seed: int, epoch: int, global_batch: int, step_in_epoch: int) -> set[int]:
    """The sample indices step ``step_in_epoch`` of an epoch trains on (all ranks together)."""
    perm = epoch_permutation(n, seed, epoch)
    lo = step_in_epoch * global_batch
    return {int(i) for i in perm[lo : lo + global_batch]}


class DataSource:
    """Base: iterate over the steps of this rank from a data position."""

    size: int
    arch: dict[str, int]
    """What the model is built for (input geometry, classes or vocabulary): kept in checkpoints."""

    def __init__(self, seed: int, rank: int, world: int, batch_size: int, accum: int) -> None:
        self.seed, self.rank, self.world, self.batch_size = seed, rank, world, batch_size
        self.accum = accum

    @property
    def global_batch(self) -> int:
        return self.batch_size * self.world * self.accum

    @property
    def steps_per_epoch(self) -> int:
        return self.size // self.global_batch

    def check(self) -> None:
        if self.steps_per_epoch == 0:
            raise UserError(
                f"data set of {self.size} samples gives no full global batch of "
                f"{self.global_batch} (--batch-size {self.batch_size} x {self.world} "
                f"process(es) x {self.accum} accumulation round(s)); lower --batch-size or "
                "--global-batch-size, or add data"
            )

    def index_steps(self, epoch: int, start: int) -> list[list[torch.Tensor]]:
        return shard_batches(
            self.size, self.seed, epoch, self.rank, self.world, self.batch_size, self.accum
        )[start:]

    def steps(self, epoch: int, start: int) -> Iterator[Step]:
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
        accum: int,
        device: torch.device,
    ) -> None:
        super().__init__(seed, rank, world, batch_size, accum)
        self.size = size
        self.arch = {"channels": channels, "image_size": image_size, "num_classes": num_classes}
        g = torch.Generator().manual_seed(seed)
        # Drawn on the CPU so the data is the same whatever the device; moved once.
        self.images = torch.randn(size, channels, image_size, image_size, generator=g).to(device)
        self.labels = torch.randint(0, num_classes, (size,), generator=g).to(device)

    def steps(self, epoch: int, start: int) -> Iterator[Step]:
        for micro in self.index_steps(epoch, start):
            out = []
            for idx in micro:
                idx = idx.to(self.images.device)
                out.append((self.images.index_select(0, idx), self.labels.index_select(0, idx)))
            yield out


class SyntheticTokens(DataSource):
    """Token sequences for the ``gpt`` model, drawn once from the seed, kept on the device.

    Each sequence follows a fixed random successor table (drawn from the seed) 3 times in 4
    and a random token otherwise, so there is something to learn: the loss falls from
    ``ln(vocab)`` towards the noise floor. ``x`` is a sequence, ``y`` the same shifted by one.
    """

    def __init__(
        self,
        size: int,
        seq_len: int,
        vocab_size: int,
        seed: int,
        rank: int,
        world: int,
        batch_size: int,
        accum: int,
        device: torch.device,
    ) -> None:
        super().__init__(seed, rank, world, batch_size, accum)
        self.size = size
        self.arch = {"vocab_size": vocab_size, "seq_len": seq_len}
        g = torch.Generator().manual_seed(seed)
        successor = torch.randperm(vocab_size, generator=g)
        noise = torch.randint(0, vocab_size, (size, seq_len + 1), generator=g)
        follow = torch.rand(size, seq_len + 1, generator=g) < 0.75
        tokens = noise.clone()
        for t in range(1, seq_len + 1):
            tokens[:, t] = torch.where(follow[:, t], successor[tokens[:, t - 1]], noise[:, t])
        self.tokens = tokens.to(device)

    def steps(self, epoch: int, start: int) -> Iterator[Step]:
        for micro in self.index_steps(epoch, start):
            out = []
            for idx in micro:
                seq = self.tokens.index_select(0, idx.to(self.tokens.device))
                out.append((seq[:, :-1], seq[:, 1:]))
            yield out


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
        accum: int,
        workers: int,
        pin_memory: bool,
    ) -> None:
        super().__init__(seed, rank, world, batch_size, accum)
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
        self.size = len(samples)
        self.arch = {"channels": channels, "image_size": image_size, "num_classes": len(classes)}
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

    def steps(self, epoch: int, start: int) -> Iterator[Step]:
        self._sampler.batches = [b for micro in self.index_steps(epoch, start) for b in micro]
        step: Step = []
        for x, y in self._loader_iter():
            step.append((x, y))
            if len(step) == self.accum:
                yield step
                step = []

    def close(self) -> None:
        """Stop the persistent workers (also when a stop left an epoch half read)."""
        loader, self._loader, self._started = self._loader, None, False
        iterator = getattr(loader, "_iterator", None)
        if iterator is not None and hasattr(iterator, "_shutdown_workers"):
            iterator._shutdown_workers()
