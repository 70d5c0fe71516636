"""The memory this process has used, as recorded in run metas and training cards."""

from __future__ import annotations

import resource


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MiB (recorded in run metas and training cards)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
