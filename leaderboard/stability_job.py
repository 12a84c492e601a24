"""Where a phase's bootstrap intervals are computed: in a process of their own, never in the
web process nor in a worker's.

The site reads what the computation needs from the database (each counting run's stored
per-item predictions, still packed, and its stored matrix), writes it into a scratch directory
and runs :mod:`scoring.engine.intervals_job` there as a child process, at a lower CPU priority
(``settings.BOOTSTRAP_NICENESS``),
with at most ``settings.BOOTSTRAP_MEMORY_MB`` of address space and
``settings.BOOTSTRAP_TIMEOUT_S`` seconds: a computation that needs more fails alone, with a
reason (:data:`FAILED_MEMORY`, :data:`FAILED_TIME`, :data:`FAILED`), and the process that
asked, a web process under the embedded set-up, goes on serving. The child keeps the phase's
replicates in ``settings.BOOTSTRAP_STORE_DIR`` between two computations, so a new or re-scored
run is the only one whose values it computes (:mod:`scoring.engine.bootstrap`). Its result,
JSON text, is stored as it comes, without being read into Python objects here.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import JSONField, Value
from django.db.models.functions import Cast

from scoring.engine import intervals_job

logger = logging.getLogger(__name__)

ONE_THREAD_EACH = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""The engine spreads its blocks over the cores itself: a numerical library that spread each of
its small products over the cores too would have the threads wait for one another (on a busy
machine, a hundred times longer)."""
KEEP_FREED_MEMORY = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296"
"""glibc's allocator in the child keeps what it frees for its next block of teams (arrays below
32 MiB from its heap, which it never gives back): each block reuses the last one's pages instead
of the system handing out fresh zeroed ones. At 3,000 teams the child of a new run then takes
0.08 million page faults instead of 0.4 to 0.7 million, and its pass by team about 2.9 s instead
of 3.4 to 3.9 s. The process lives for one computation; other C libraries ignore the setting."""
FAILED_MEMORY = "the computation needed more than its {limit:,} MiB of memory"
FAILED_TIME = "the computation took longer than its {limit:,} seconds"
FAILED_KILLED = "the computation was stopped by the system (most often for want of memory)"
FAILED = "the computation failed"


@dataclass(frozen=True)
class Outcome:
    """What the child process gave: the result's JSON text and a summary, or why it failed."""

    result: str = ""
    teams: int = 0
    skipped: int = 0
    failure: str = ""


def store_dir(phase_id: int) -> Path:
    """Where the replicates of a phase are kept between two computations."""
    return Path(settings.BOOTSTRAP_STORE_DIR) / f"phase-{phase_id}"


def run(
    *,
    gold: np.ndarray,
    keep: np.ndarray | None,
    runs: Sequence[tuple[int, bytes, list]],
    teams: Mapping[int, str],
    job: Mapping[str, Any],
) -> Outcome:
    """Compute a result in a child process (see the module docstring); the arguments are
    :func:`scoring.engine.intervals_job.write_job`'s."""
    with tempfile.TemporaryDirectory(prefix="intervals-") as scratch:
        directory = Path(scratch)
        intervals_job.write_job(directory, gold=gold, keep=keep, runs=runs, teams=teams, settings=job)
        command = [sys.executable, "-m", "scoring.engine.intervals_job", str(directory)]
        command += ["--memory-mb", str(settings.BOOTSTRAP_MEMORY_MB), "--niceness", str(settings.BOOTSTRAP_NICENESS)]
        try:
            done = subprocess.run(
                command,
                cwd=settings.BASE_DIR,
                env={**os.environ, **ONE_THREAD_EACH, "GLIBC_TUNABLES": _tunables()},
                capture_output=True,
                text=True,
                timeout=settings.BOOTSTRAP_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Outcome(failure=FAILED_TIME.format(limit=settings.BOOTSTRAP_TIMEOUT_S))
        if done.returncode == intervals_job.OUT_OF_MEMORY:
            return Outcome(failure=FAILED_MEMORY.format(limit=settings.BOOTSTRAP_MEMORY_MB))
        if done.returncode == -signal.SIGKILL:
            return Outcome(failure=FAILED_KILLED)
        if done.returncode != 0:
            logger.error("bootstrap intervals failed (status %s): %s", done.returncode, done.stderr[-4000:])
            return Outcome(failure=FAILED)
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        result = (directory / intervals_job.RESULT).read_text()
    return Outcome(result=result, teams=summary["teams"], skipped=summary["skipped"])


def _tunables() -> str:
    """:data:`KEEP_FREED_MEMORY`, then the tunables this process was given, if any (glibc takes
    the last of a name: the operator's own win)."""
    given = os.environ.get("GLIBC_TUNABLES", "")
    return f"{KEEP_FREED_MEMORY}:{given}" if given else KEEP_FREED_MEMORY


def json_text(text: str) -> Cast:
    """JSON text as the value of a JSON field in an update, stored without being parsed here
    (the database casts it: PostgreSQL's jsonb reads it, SQLite keeps the text)."""
    return Cast(Value(text), output_field=JSONField())
