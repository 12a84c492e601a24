"""How many cores the engine's work may spread over."""

from __future__ import annotations

import os


def available_cores() -> int:
    """The CPUs this process may run on (what ``nproc`` prints)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
