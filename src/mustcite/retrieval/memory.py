"""The memory this process has used (as recorded in run metas and training cards), and letting go of
the pages of a memory-mapped array once read."""

from __future__ import annotations

import mmap
import resource
from typing import Any


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MiB (recorded in run metas and training cards)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def release_pages(arr: Any) -> None:
    """Drop the pages of a memory-mapped numpy array (``np.memmap``) from this process's resident
    memory; they stay in the page cache, so the next read is a memory copy, not a disk read. Any
    other array is left as it is."""
    mapping = getattr(arr, "_mmap", None)
    if isinstance(mapping, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        mapping.madvise(mmap.MADV_DONTNEED)
