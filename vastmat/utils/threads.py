"""Torch CPU threads of a tool's run: the default and a setting that the caller gets back."""
from __future__ import annotations

import contextlib
import os
from typing import Iterator

FALLBACK_THREADS = 2  # the zoo's measured best on 2 cores (docs/zoo.md, threads on shared cores)


def default_threads() -> int:
    """``$OMP_NUM_THREADS`` where it is set (e.g. the test workers' 1, sharing the cores), else 2."""
    value = os.environ.get('OMP_NUM_THREADS', '')
    return int(value) if value.isdigit() and int(value) > 0 else FALLBACK_THREADS


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with ``threads`` torch CPU threads, then restore the caller's setting (a test in the same
    process keeps its own)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
