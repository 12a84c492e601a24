"""What an organiser waits for while importing runs with ``manage.py import_submissions`` into one
phase on the embedded set-up: 100 files, then 1,000, then 100 more, each batch's time a file.

Run ``python benchmarks/bench_import.py [--items 12284] [--batches 100,1000,100] [--with-server]``.
Stdout is a Markdown table; never asserted in tests.

A task of three classes with the SemEval-2017 Task 4A test set's size and class counts (or
``--items`` items in the same shares) is created in a SQLite file of its own (``var/`` in a
scratch directory, the embedded defaults otherwise: the immediate backend, derived results in the
web process's threads, intervals of 1,000 replicates); each team's file is the gold label with a
team-specific probability in [0.5, 0.75], otherwise a random class. Each batch is one
``import_submissions`` process, timed from its launch to its end (Python's start included: about
a second), divided by its files. With ``--with-server`` the site runs meanwhile
(``manage.py runserver``, as ``make demo`` starts it), so its sweep computes the phase's intervals
and analysis beside the import, on the same cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
PYTHON = str(REPO / ".venv" / "bin" / "python")
LABELS = ("negative", "neutral", "positive")
SHARES = (3972, 5937, 2375)
SLUG = "import-bench"
PORT = 8011

SET_UP = """
import datetime as dt, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone
from leaderboard.services.tasks import task_create
call_command("migrate", verbosity=0)
now = timezone.now()
task_create(organiser=get_user_model().objects.create_user("organiser"), slug=sys.argv[1], title="Import benchmark",
    description="benchmarks/bench_import.py", labels=sys.argv[2].split(","), gold_name="gold.csv",
    gold_content=open(sys.argv[3], "rb").read(), primary_metric="macro_recall",
    opens_at=now - dt.timedelta(days=1), closes_at=now + dt.timedelta(days=1), max_per_day=100000, max_total=100000)
"""


def labels_csv(ids: list[str], codes: np.ndarray) -> bytes:
    return ("id,label\n" + "".join(f"{i},{LABELS[c]}\n" for i, c in zip(ids, codes, strict=True))).encode()


def write_files(folder: Path, batches: list[int], items: int) -> tuple[Path, list[Path]]:
    """The gold file and one folder of team files per batch."""
    rng = np.random.default_rng(2017)
    counts = np.round(np.array(SHARES) * items / sum(SHARES)).astype(int)
    counts[-1] += items - counts.sum()
    gold = rng.permutation(np.repeat(np.arange(len(LABELS)), counts))
    ids = [f"tweet-{i:06d}" for i in range(items)]
    (folder / "gold.csv").write_bytes(labels_csv(ids, gold))
    team, folders = 0, []
    for number, size in enumerate(batches, start=1):
        batch = folder / f"batch-{number}"
        batch.mkdir()
        for _ in range(size):
            share = rng.uniform(0.5, 0.75)
            predicted = np.where(rng.random(items) < share, gold, rng.integers(0, len(LABELS), items))
            (batch / f"team-{team:05d}.csv").write_bytes(labels_csv(ids, predicted))
            team += 1
        folders.append(batch)
    return folder / "gold.csv", folders


def server(env: dict[str, str]) -> subprocess.Popen:
    process = subprocess.Popen(
        [PYTHON, "manage.py", "runserver", f"127.0.0.1:{PORT}", "--noreload"],
        cwd=REPO,
        env={**env, "DEBUG": "false"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    while socket.socket().connect_ex(("127.0.0.1", PORT)) != 0:
        time.sleep(0.1)
    return process


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=sum(SHARES))
    parser.add_argument("--batches", default="100,1000,100")
    parser.add_argument("--with-server", action="store_true", help="the site runs during the import")
    args = parser.parse_args()
    batches = [int(size) for size in args.batches.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="importbench-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.dev", "LEADERBOARD_VAR_DIR": str(scratch / "var")}
    env.pop("DATABASE_URL", None)
    (scratch / "var").mkdir()
    running = None
    try:
        gold, folders = write_files(scratch, batches, args.items)
        subprocess.run([PYTHON, "-c", SET_UP, SLUG, ",".join(LABELS), str(gold)], cwd=REPO, env=env, check=True)
        running = server(env) if args.with_server else None
        rows, teams = [], 0
        for folder, size in zip(folders, batches, strict=True):
            started = time.perf_counter()
            subprocess.run(
                [PYTHON, "manage.py", "import_submissions", SLUG, str(folder)],
                cwd=REPO,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            elapsed = time.perf_counter() - started
            rows.append((teams, teams + size, elapsed, elapsed / size * 1000))
            teams += size
    finally:
        if running is not None:
            os.killpg(running.pid, signal.SIGTERM)
            running.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    where = "the site running meanwhile" if args.with_server else "no server running"
    print(f"\nimport_submissions, {args.items:,} items a file, {where}\n")
    print("| batch | teams before → after | time | a file |\n| --- | --- | ---: | ---: |")
    for number, (before, after, elapsed, per_file) in enumerate(rows, start=1):
        print(f"| {number} | {before:,} → {after:,} | {elapsed:,.1f} s | {per_file:,.0f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
