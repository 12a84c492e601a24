"""Helper processes of the benchmarks and the scaled tests: start, wait for, and kill them.

Each process (an RQ worker, gunicorn) runs in a session of its own, and
:meth:`ManagedProcess.kill` kills every process of the session (gunicorn's workers, a worker's
child computing intervals), as a machine that loses power would.

No Django here: a script may import it before it sets Django up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from rq import Worker

T = TypeVar("T")

BASE_DIR = Path(__file__).resolve().parent.parent
WORKER_ARGS = ("scoring_worker", "default", "--job-class", "django_tasks_rq.Job")
"""The worker command of the README (after ``manage.py``); ``--name`` is added per worker."""


def wait_until(condition: Callable[[], T], *, timeout_s: float, what: str, interval_s: float = 0.02) -> T:
    """Poll ``condition`` until it returns something truthy, and return that; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(interval_s)


def _process_state(pid: int) -> tuple[str, int] | None:
    """(state letter, session id) of a live process, from /proc; None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces
    return fields[0], int(fields[3])


def session_pids(session_id: int) -> list[int]:
    """Processes of a session that still run (zombies hold no connection: they count as gone)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            state = _process_state(int(entry.name))
            if state is not None and state[1] == session_id and state[0] != "Z":
                pids.append(int(entry.name))
    return pids


@dataclass
class ManagedProcess:
    name: str
    popen: subprocess.Popen
    log_path: Path

    def pids(self) -> list[int]:
        """The process and its children (gunicorn's workers, an intervals computation)."""
        return session_pids(self.popen.pid)

    def kill(self) -> None:
        """SIGKILL the process, then its children, and wait until none of them runs.

        The parent goes first so that it cannot fork a new child meanwhile.
        """
        self._signal(self.popen.pid)
        self.popen.wait(timeout=30)

        def all_gone() -> bool:
            for pid in self.pids():
                self._signal(pid)
            return not self.pids()

        wait_until(all_gone, timeout_s=30, what=f"the processes of {self.name} to end")

    @staticmethod
    def _signal(pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def log_tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def start_process(*, name: str, args: Sequence[str], env: dict[str, str], log_dir: Path) -> ManagedProcess:
    """Start ``args`` in the repository, in a session of its own, output to ``<name>.log``."""
    log_path = log_dir / f"{name}.log"
    with log_path.open("wb") as log:
        popen = subprocess.Popen(
            list(args),
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return ManagedProcess(name=name, popen=popen, log_path=log_path)


def start_worker(*, name: str, env: dict[str, str], log_dir: Path) -> ManagedProcess:
    """Start ``manage.py scoring_worker`` (rqworker, niced); the caller waits for it to register in Redis."""
    return start_process(
        name=name, args=[sys.executable, "manage.py", *WORKER_ARGS, "--name", name], env=env, log_dir=log_dir
    )


def wait_listening(workers: Sequence[ManagedProcess], *, redis_client, timeout_s: float) -> None:
    """Wait until every worker has registered in Redis; fail at once if one exits."""

    def listening() -> bool:
        for worker in workers:
            if worker.popen.poll() is not None:
                raise AssertionError(f"{worker.name} exited:\n{worker.log_tail()}")
        names = {w.name for w in Worker.all(connection=redis_client)}
        return all(w.name in names for w in workers)

    wait_until(listening, timeout_s=timeout_s, what=f"{len(workers)} worker(s) to listen", interval_s=0.1)


CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium, which the browser tests and the page benchmark drive through Playwright."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
"""Headless, and quiet on a closed network: no background connections, no component updates."""
