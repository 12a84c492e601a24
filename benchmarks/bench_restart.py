"""What a person waits for when the embedded set-up starts again: ``make demo`` launched on the
data it loaded before (until its first page answers), and the first read of each results page
in a fresh web process.

Run ``python benchmarks/bench_restart.py [--runs 3]`` from the repository, after ``make demo``
has run once (the demo loaded in ``var/``) and with nothing else on 127.0.0.1:8000. Stdout is a
Markdown table of each figure's runs and median; never asserted in tests.

- **make demo, again**: ``make demo`` as the README starts it (install, migrate, load_demo,
  collectstatic, runserver), timed from its launch to the first answer of the evaluation
  phase's board.
- **first read**: ``manage.py runserver`` as ``make demo`` ends by starting it (``DEBUG=false``),
  and, once it accepts connections, one read of one page, timed as the client sees it; a new
  process for each page and run, so each figure is a page's first read in its process.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ADDRESS = ("127.0.0.1", 8000)
PHASE = "/tasks/semeval-2017-task-4a/phases/evaluation/"
PAGES = (
    ("board", "leaderboard/"),
    ("disagreements", "disagreements/"),
    ("analysis", "analysis/"),
    ("what-if", "what-if/"),
    ("CSV download", "leaderboard.csv"),
)
STARTS_WITHIN_S = 300


def url(page: str) -> str:
    return f"http://{ADDRESS[0]}:{ADDRESS[1]}{PHASE}{page}"


def answers(address: str) -> bool:
    try:
        with urllib.request.urlopen(address, timeout=30) as response:
            response.read()
            return response.status == 200
    except OSError:
        return False


def accepts() -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(ADDRESS) == 0


def started(command: list[str], env: dict[str, str], repo: Path) -> subprocess.Popen:
    if accepts():
        raise SystemExit(f"something already answers on {ADDRESS[0]}:{ADDRESS[1]}: stop it first")
    return subprocess.Popen(
        command, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def stopped(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)
    while accepts():
        time.sleep(0.1)


def until(ready, limit_s: float = STARTS_WITHIN_S) -> None:
    deadline = time.monotonic() + limit_s
    while not ready():
        if time.monotonic() > deadline:
            raise SystemExit("the server did not start")
        time.sleep(0.05)


def make_demo_again(repo: Path) -> float:
    """Seconds from launching ``make demo`` in ``repo`` to its board's first answer."""
    launched = time.perf_counter()
    process = started(["make", "demo"], dict(os.environ), repo)
    try:
        until(lambda: answers(url(PAGES[0][1])))
        return time.perf_counter() - launched
    finally:
        stopped(process)


def first_read(page: str, repo: Path) -> float:
    """Milliseconds of a page's first read in a fresh web process of ``repo``."""
    python = str(repo / ".venv" / "bin" / "python")
    command = [python, "manage.py", "runserver", f"{ADDRESS[0]}:{ADDRESS[1]}", "--noreload"]
    process = started(command, {**os.environ, "DEBUG": "false"}, repo)
    try:
        until(accepts)
        begun = time.perf_counter()
        if not answers(url(page)):
            raise SystemExit(f"{url(page)} did not answer 200")
        return (time.perf_counter() - begun) * 1000
    finally:
        stopped(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repo", type=Path, default=REPO, help="a checkout of the product to time (default: this one)")
    args = parser.parse_args()
    repo = args.repo.resolve()
    again = [make_demo_again(repo) for _ in range(args.runs)]
    rows = [("make demo, again: launch to the board's first answer", "s", again)]
    for name, page in PAGES:
        reads = [first_read(page, repo) for _ in range(args.runs)]
        rows.append((f"first read in a fresh process: {name}", "ms", reads))
    print("| what | runs | median |\n| --- | --- | ---: |")
    for what, unit, values in rows:
        digits = 1 if unit == "s" else 0
        shown = ", ".join(f"{value:,.{digits}f}" for value in values)
        print(f"| {what} | {shown} {unit} | {statistics.median(values):,.{digits}f} {unit} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
