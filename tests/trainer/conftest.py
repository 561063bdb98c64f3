"""Fixtures for the trainer tests: tiny CPU runs of simplecnn on synthetic data."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
for path in (REPO, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)


@pytest.fixture(scope="session", autouse=True)
def one_cpu_thread() -> Iterator[None]:
    """In-process runs use one CPU thread, like the subprocesses (OMP_NUM_THREADS=1).

    The tiny models gain nothing from more threads, and on a shared 2-core machine OpenMP
    threads that spin while waiting for a busy core made the folder several times slower.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture
def trainer_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """caplog that sees the trainer's records (its logger stops propagating once set up)."""
    logger = logging.getLogger("trainer")
    old = logger.propagate
    logger.propagate = True
    caplog.set_level(logging.INFO, logger="trainer")
    try:
        yield caplog
    finally:
        logger.propagate = old


# Fixtures of the object-storage tests (local S3 and STS stand-ins), shared by their files.
from object_stores import (  # noqa: E402, F401
    clean_cloud_env,
    fake_sts,
    moto_s3,
    resolve_localhost_subdomains,
)
