"""How long the site's background job takes to compute one phase's bootstrap intervals.

Run ``python benchmarks/bench_stability_task.py [--teams 100] [--replicates 1000] [--repeat 3]``.
Prints one Markdown table row and the machine line; never asserted in tests.

Set-up (seeded, not timed): a scratch SQLite database, a task whose gold file has the
SemEval-2017 Task 4A test set's size and class counts (12,284 items), and ``--teams`` teams, each
with one scored hard-label submission written by ``tools.factory`` (a random better-than-chance
matrix, per-item predictions rebuilt from it, as the scoring task would have stored them).

Timed: :func:`leaderboard.stability.stability_compute`, the body of the background task, from
the phase's id to the stored row: the scores' stamp, the counting submissions, the gold file
read, every team's items unpacked and checked against its stored matrix, the paired bootstrap
(every ranking column raw and calibrated, every rho of the heatmap) and the JSON result written.
Each run starts with the stored result deleted; the best of ``--repeat`` runs is printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import django
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LABELS = ("negative", "neutral", "positive")
GOLD_COUNTS = (3972, 5937, 2375)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teams", type=int, default=100)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    return parser.parse_args(argv)


ARGS = parse_args(sys.argv[1:])
SCRATCH = Path(tempfile.mkdtemp(prefix="stabilitybench-"))
os.environ["DATABASE_URL"] = f"sqlite:///{SCRATCH / 'bench.sqlite3'}"
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ["LEADERBOARD_VAR_DIR"] = str(SCRATCH / "var")
django.setup()

from django.conf import settings  # noqa: E402 (Django is set up first)
from django.core.management import call_command  # noqa: E402
from django.utils import timezone  # noqa: E402

from leaderboard import stability  # noqa: E402
from leaderboard.models import PhaseStability, StoredFile  # noqa: E402
from tools import factory  # noqa: E402


def build(teams: int) -> int:
    """The task and its scored submissions; returns the phase's id."""
    rng = np.random.default_rng(2017)
    gold = rng.permutation(np.repeat(np.arange(len(LABELS)), GOLD_COUNTS))
    ids = factory.item_ids(len(gold))
    now = timezone.now()
    task = factory.task_create(
        slug="stability-bench",
        title="Stability benchmark",
        description="benchmarks/bench_stability_task.py",
        labels=LABELS,
        gold_content=factory.labels_csv(ids, LABELS, gold),
        organiser_password="stability-bench-password",
        opens_at=now - timedelta(days=2),
        closes_at=now + timedelta(days=1),
    )
    shared_file = StoredFile.of(name="run.csv", content=b"id,label\n")
    shared_file.save()
    factory.scored_submissions_create(
        task=task,
        runs=[
            factory.ScoredRun(
                team=team,
                file=shared_file,
                matrix=factory.random_confusion_matrix(rng, gold_counts=GOLD_COUNTS),
                at=now - timedelta(hours=1),
            )
            for team in factory.teams_create(task=task, count=teams)
        ],
        batch_size=500,
    )
    return task.current_phase().pk


def main() -> None:
    call_command("migrate", verbosity=0)
    settings.BOOTSTRAP_REPLICATES = ARGS.replicates
    phase_id = build(ARGS.teams)
    times = []
    for _ in range(ARGS.repeat):
        PhaseStability.objects.all().delete()
        start, cpu = time.perf_counter(), time.process_time()
        outcome = stability.stability_compute(phase_id=phase_id)
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    wall, cpu_time = min(times)
    row = PhaseStability.objects.get(phase_id=phase_id)
    print("| teams | items | replicates | background task (s) | its CPU time (s) | stored result (kB) |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {ARGS.teams} | {sum(GOLD_COUNTS):,} | {ARGS.replicates:,} | {wall:.2f} | {cpu_time:.2f} "
        f"| {len(str(row.result)) / 1000:.0f} |"
    )
    print()
    print(
        f"Outcome: {outcome}. Machine: Python {platform.python_version()}, numpy {np.__version__}, "
        f"nproc {os.cpu_count()}; SQLite; best of {ARGS.repeat} runs; load average {os.getloadavg()[0]:.1f}."
    )


if __name__ == "__main__":
    main()
