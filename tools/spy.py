"""Where running processes spend their CPU, by part: py-spy's samples of the thread holding each
process's interpreter lock, sorted into parts by what their stacks hold.

``Spy(pids)`` starts ``py-spy record`` on each process (and its children) and ``stop()`` ends
them; :func:`shares` then counts the samples of each part. A sample is a thread running Python
at that instant, so the shares are of a process group's Python time; a benchmark multiplies them
by the group's CPU seconds read from ``/proc``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

Classifier = Callable[[str], str]
"""A sample's stack (py-spy's raw frames, ``;``-separated) → the name of its part."""


def py_spy() -> str:
    """The py-spy program beside this interpreter (requirements-dev.txt), or on the path."""
    beside = Path(sys.executable).with_name("py-spy")
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if found is None:
        raise SystemExit("py-spy is not installed: pip install -r requirements-dev.txt")
    return found


RECORD = ["--subprocesses", "--gil", "--nonblocking", "--format", "raw"]
"""Every child too (gunicorn's workers, a worker's intervals process); only the thread holding the
interpreter lock; without pausing the process; one line a distinct stack, with its count."""


class Spy:
    """``py-spy record`` on each of ``pids`` and its children, ``rate`` samples a second, until
    :meth:`stop`; its raw samples in ``directory``."""

    def __init__(self, pids: Iterable[int], directory: Path, *, rate: int = 100) -> None:
        self.outputs: list[Path] = []
        self.processes: list[subprocess.Popen] = []
        for pid in pids:
            output = directory / f"spy-{pid}.txt"
            self.outputs.append(output)
            with output.with_suffix(".log").open("wb") as log:  # the child keeps its own copy
                command = [py_spy(), "record", "--pid", str(pid), *RECORD, "--rate", str(rate), "--output", str(output)]
                self.processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log))

    def stop(self) -> list[Path]:
        """End the recordings (py-spy writes its samples on SIGINT); the files written."""
        for process in self.processes:
            process.send_signal(signal.SIGINT)
        for process in self.processes:
            process.wait(timeout=60)
        return [output for output in self.outputs if output.exists()]


def shares(outputs: Iterable[Path], classify: Classifier) -> Counter[str]:
    """Samples per part, over every stack of ``outputs``."""
    found: Counter[str] = Counter()
    for output in outputs:
        for line in output.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if stack and count.isdigit():  # a line cut short when the recording ended is left out
                found[classify(stack)] += int(count)
    return found


def own_frames(stack: str, prefix: str) -> list[str]:
    """The function names of a stack's frames in files under ``prefix`` (``leaderboard/views/``),
    outermost first."""
    return [frame.split(" (", 1)[0] for frame in stack.split(";") if f"({prefix}" in frame.replace(os.sep, "/")]
