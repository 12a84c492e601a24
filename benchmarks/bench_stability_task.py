"""What the site's interval job costs as a phase grows: time, CPU, peak memory, a new run.

Run ``python benchmarks/bench_stability_task.py [--teams 100 500 1500 3000 10000]
[--replicates 1000] [--repeat 1]``. Prints a Markdown table, one row per team count, and the
machine line; never asserted in tests.

Each row is measured in processes of its own, so that each peak is that row's alone:

* **set-up** (not timed): a scratch SQLite database, a task whose gold file has the SemEval-2017
  Task 4A test set's size and class counts (12,284 items), and ``--teams`` teams, each with one
  scored hard-label submission written by ``tools.factory`` (a random better-than-chance matrix,
  per-item predictions rebuilt from it, as the scoring task would have stored them);
* **the job**, in a fresh process, as the site runs it: :func:`leaderboard.derived.compute` of the intervals,
  from the phase's id to the stored row (the scores' stamp, the counting submissions, every
  team's items, the paired bootstrap of every ranking column raw and calibrated with every rho
  of the heatmap, the overall rankings, the result stored). First with nothing kept from an
  earlier computation (**the job**); then one team uploads a new run, stored as scored, and the
  job runs again (**a new run reflected**: the time from the stored score to the stored
  intervals, the pause between two computations aside). Wall time, CPU time of the process and
  of its children, and the peak resident memory (``ru_maxrss``) of the process and of the
  largest child it waited for;
* **the counting product**, in another process: the one matrix product that counts every
  replicate's confusion matrices, float64 resampling weights (replicates × items) times the
  teams' one-hot predictions (items × teams·classes), with the BLAS on every core, the weights
  drawn beforehand; computed a thousand teams at a time (the same arithmetic, in bounded memory).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LABELS = ("negative", "neutral", "positive")
GOLD_COUNTS = (3972, 5937, 2375)
PRODUCT_TEAMS = 1000
"""Teams per block of the counting product."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teams", type=int, nargs="+", default=[100])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of the job per row; the best is shown")
    parser.add_argument("--step", choices=("build", "job", "product"), help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def django_setup(scratch: Path) -> None:
    import django

    os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'bench.sqlite3'}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    os.environ["LEADERBOARD_VAR_DIR"] = str(scratch / "var")
    django.setup()


def build(teams: int) -> dict:
    """The task and its scored submissions."""
    from django.core.management import call_command
    from django.utils import timezone

    from leaderboard.models import StoredFile
    from tools import factory

    call_command("migrate", verbosity=0)
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
    return {"phase": task.current_phase().pk}


def new_run(phase_id: int) -> None:
    """One team's new run, stored as the scoring task stores a score (its counting run now)."""
    from django.db import transaction
    from django.utils import timezone

    from leaderboard.models import Phase, StoredFile
    from tools import factory

    phase = Phase.objects.select_related("task").get(pk=phase_id)
    team = phase.task.community.teams.order_by("pk").first()
    run = StoredFile.objects.first()
    rng = np.random.default_rng(2018)
    with transaction.atomic():
        factory.scored_submissions_create(
            task=phase.task,
            phase=phase,
            runs=[
                factory.ScoredRun(
                    team=team,
                    file=run,
                    matrix=factory.random_confusion_matrix(rng, gold_counts=GOLD_COUNTS),
                    at=timezone.now(),
                )
            ],
            batch_size=1,
        )


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_job(phase_id: int) -> tuple[float, float, str]:
    """The job once: wall time, CPU time of this process and its children, its outcome."""
    from leaderboard import derived

    start, cpu, child_cpu = time.perf_counter(), time.process_time(), children_cpu()
    outcome = derived.compute("intervals", phase_id)
    wall = time.perf_counter() - start
    return wall, time.process_time() - cpu + children_cpu() - child_cpu, outcome


def job(phase_id: int, replicates: int, repeat: int, scratch: Path) -> dict:
    """The job with nothing kept (best of ``repeat``), then one new run reflected."""
    import shutil

    from django.conf import settings

    import leaderboard.derived  # noqa: F401 (imported before the clock starts, as in a running worker)
    from leaderboard.models import PhaseStability

    settings.BOOTSTRAP_REPLICATES = replicates
    settings.BOOTSTRAP_EVERY_S = 0
    kept = getattr(settings, "BOOTSTRAP_STORE_DIR", None)
    full = []
    for _ in range(repeat):
        PhaseStability.objects.all().delete()
        if kept:
            shutil.rmtree(kept, ignore_errors=True)
        full.append(timed_job(phase_id))
    wall, cpu, outcome = min(full)
    stored_mb = stored_size(phase_id) / 1e6
    new_run(phase_id)
    new_wall, new_cpu, new_outcome = timed_job(phase_id)
    if not PhaseStability.objects.filter(phase_id=phase_id, stamp=stability_stamp(phase_id)).exists():
        raise SystemExit("the new run's intervals were not stored")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    return {
        "wall": wall,
        "cpu": cpu,
        "outcome": outcome,
        "new_wall": new_wall,
        "new_cpu": new_cpu,
        "new_outcome": new_outcome,
        "stored_mb": stored_mb,
        "peak_gib": own,
        "child_peak_gib": child,
    }


def stored_size(phase_id: int) -> int:
    """The stored result's size as the database holds it (not read into this process)."""
    from django.db.models import TextField
    from django.db.models.functions import Cast, Length

    from leaderboard.models import PhaseStability

    found = PhaseStability.objects.filter(phase_id=phase_id).annotate(size=Length(Cast("result", TextField())))
    return found.values_list("size", flat=True).get()


def stability_stamp(phase_id: int) -> str:
    from leaderboard.models import Phase
    from leaderboard.stability import inputs_digest

    return inputs_digest(Phase.objects.select_related("task").get(pk=phase_id))


def product(teams: int, replicates: int) -> dict:
    """The counting product's best time of three, a block of teams at a time."""
    rng = np.random.default_rng(1)
    n_items = sum(GOLD_COUNTS)
    draws = rng.integers(0, n_items, size=(replicates, n_items)) + np.arange(replicates)[:, None] * n_items
    weights = np.bincount(draws.ravel(), minlength=replicates * n_items).reshape(replicates, n_items)
    weights = weights.astype(np.float64)
    del draws
    blocks = []
    for start in range(0, teams, PRODUCT_TEAMS):
        count = min(PRODUCT_TEAMS, teams - start)
        codes = rng.integers(0, len(LABELS), size=(n_items, count))
        one_hot = np.zeros((n_items, count, len(LABELS)))
        np.put_along_axis(one_hot, codes[..., None], 1.0, axis=-1)
        blocks.append(one_hot.reshape(n_items, count * len(LABELS)))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for block in blocks:
            np.matmul(weights, block)
        times.append(time.perf_counter() - start)
    return {"product": min(times)}


def step(args: argparse.Namespace, name: str, scratch: Path, teams: int) -> dict:
    """Run one step in a process of its own; its JSON answer."""
    command = [sys.executable, __file__, "--step", name, "--scratch", str(scratch), "--teams", str(teams)]
    command += ["--replicates", str(args.replicates), "--repeat", str(args.repeat)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{name} of {teams} teams failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_step(args: argparse.Namespace) -> None:
    scratch = Path(args.scratch)
    teams = args.teams[0]
    if args.step == "product":
        print(json.dumps(product(teams, args.replicates)))
        return
    django_setup(scratch)
    if args.step == "build":
        found = build(teams)
        (scratch / "phase").write_text(str(found["phase"]))
        print(json.dumps(found))
    else:
        print(json.dumps(job(int((scratch / "phase").read_text()), args.replicates, args.repeat, scratch)))


def main() -> None:
    args = parse_args(sys.argv[1:])
    if args.step:
        run_step(args)
        return
    load_before = os.getloadavg()[0]
    print(
        "| teams | the job (s) | its CPU (s) | peak memory, job's process / its child (GiB) "
        "| a new run reflected (s) | its CPU (s) | stored result (MB) | counting product (s) | job / product |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    outcomes = []
    for teams in args.teams:
        with tempfile.TemporaryDirectory(prefix="stabilitybench-") as scratch:
            step(args, "build", Path(scratch), teams)
            found = step(args, "job", Path(scratch), teams)
        found |= step(args, "product", Path(tempfile.gettempdir()), teams)
        outcomes.append(f"{teams:,} teams: {found['outcome']}; then {found['new_outcome']}")
        print(
            f"| {teams:,} | {found['wall']:.1f} | {found['cpu']:.1f} "
            f"| {found['peak_gib']:.2f} / {found['child_peak_gib']:.2f} | {found['new_wall']:.1f} "
            f"| {found['new_cpu']:.1f} | {found['stored_mb']:.1f} | {found['product']:.2f} "
            f"| {found['wall'] / found['product']:.1f}× |",
            flush=True,
        )
    print()
    print("Outcomes: " + "; ".join(outcomes) + ".")
    print(
        f"Machine: Python {platform.python_version()}, numpy {np.__version__}, nproc {os.cpu_count()}; SQLite; "
        f"{sum(GOLD_COUNTS):,} items, {args.replicates:,} replicates; best of {args.repeat} run(s) of the job; "
        f"load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end."
    )


if __name__ == "__main__":
    main()
