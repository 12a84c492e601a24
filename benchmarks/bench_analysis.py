"""How long a phase's analysis takes (what the teams got wrong together: leaderboard.analysis).

Run ``python benchmarks/bench_analysis.py [--teams 3000] [--repeat 3]``. Prints one Markdown
table row and the machine line; never asserted in tests.

Set-up (seeded, not timed): a scratch SQLite database, a task whose gold file has the
SemEval-2017 Task 4A test set's size and class counts (12,284 items), and ``--teams`` teams, each
with one scored hard-label submission written by ``tools.factory`` (a random better-than-chance
matrix, per-item predictions rebuilt from it, as the scoring task would have stored them).

Timed, separately:

- **the job**: :func:`leaderboard.derived.compute` of the analysis, the body of the background job, from
  the phase's id to the stored row: the board read for the stamp, every team's items read from the
  database a chunk at a time, unpacked and checked against its stored matrix, the analysis, the
  result written and the check for newer scores. Each run starts with the stored result deleted.
- **the engine**: :func:`scoring.engine.analysis.analyse` on the same labels (teams × items, one
  byte each): the majority vote and the oracle scored under every metric, kappa between the first
  50 teams and its clustering, the hardest items.

The best of ``--repeat`` runs of each is printed, with the job's CPU time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import django
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teams", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    return parser.parse_args(argv)


ARGS = parse_args(sys.argv[1:])
SCRATCH = Path(tempfile.mkdtemp(prefix="analysisbench-"))
os.environ["DATABASE_URL"] = f"sqlite:///{SCRATCH / 'bench.sqlite3'}"
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ["LEADERBOARD_VAR_DIR"] = str(SCRATCH / "var")
django.setup()

from django.core.management import call_command  # noqa: E402 (Django is set up first)

from leaderboard import analysis, derived  # noqa: E402
from leaderboard.models import PhaseAnalysis, Submission  # noqa: E402
from leaderboard.uploads import stored_gold  # noqa: E402
from scoring.engine.analysis import analyse  # noqa: E402
from scoring.engine.items import unpack_items  # noqa: E402
from tools import factory  # noqa: E402


def main() -> None:
    call_command("migrate", verbosity=0)
    phase = factory.scored_phase(
        slug="analysis-bench",
        title="Analysis benchmark",
        description="benchmarks/bench_analysis.py",
        password="analysis-bench-password",
        teams=ARGS.teams,
    )
    phase_id = phase.pk
    job = []
    for _ in range(ARGS.repeat):
        PhaseAnalysis.objects.all().delete()
        start, cpu = time.perf_counter(), time.process_time()
        outcome = derived.compute("analysis", phase_id)
        job.append((time.perf_counter() - start, time.process_time() - cpu))
    gold = stored_gold(phase)
    labels = np.stack([unpack_items(items) for items in Submission.objects.values_list("items", flat=True)])
    engine = []
    for _ in range(ARGS.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        analyse(gold.codes, labels, labels=factory.SEMEVAL_LABELS, agreement_runs=range(analysis.AGREEMENT_TEAMS))
        engine.append((time.perf_counter() - start, time.process_time() - cpu))
    row = PhaseAnalysis.objects.get(phase_id=phase_id)
    (job_wall, job_cpu), (engine_wall, _) = min(job), min(engine)
    print("| teams | items | the job (s) | its CPU time (s) | the engine alone (s) | stored result (kB) |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {ARGS.teams:,} | {sum(factory.SEMEVAL_GOLD_COUNTS):,} | {job_wall:.2f} | {job_cpu:.2f} | {engine_wall:.2f} "
        f"| {len(str(row.result)) / 1000:.0f} |"
    )
    print()
    print(
        f"Outcome: {outcome}. Machine: Python {platform.python_version()}, numpy {np.__version__}, "
        f"nproc {os.cpu_count()}; SQLite; best of {ARGS.repeat} runs; load average {os.getloadavg()[0]:.1f}."
    )


if __name__ == "__main__":
    main()
