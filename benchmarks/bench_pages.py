"""How the results pages answer as a board grows: 50, 500, 3,000 and 10,000 teams.

For each size, a task of three classes (with ``--outputs K``, a multi-label task of K 0/1
labels, ranked by the Jaccard index) with a 1,200-item gold file split 50/50 into a public
and a private part (so that the shake-up page exists), one scored run per team (written
directly as rows by ``tools.factory``, with per-item predictions and the parts' scores, as the
scorer writes them; with ``--import``, a prediction file per team loaded by the
``import_submissions`` command, which creates the teams and scores each file, its time printed),
and one participant, ``member``, whose team is one of them. Then, for
every results page and download, for an anonymous visitor, for the logged-in participant and
for the task's organiser (the shake-up, which only the organisers see while the phase runs, for
the organiser alone):

- **cold**: the first read after a new score. The participant uploads a real prediction file
  through the upload service; it is scored inside the request, as on the embedded set-up, and
  its transaction bumps the task's results version, so the next read finds nothing cached
  for the phase. Each upload is timed too: the cost of one new score (validation, scoring,
  its writes and the invalidation).
- **warm**: the same page read again, nothing written in between.

In process, through Django's test client (no HTTP, no network), on a SQLite file of its own
(or, when ``DATABASE_URL`` names a PostgreSQL server, a database ``leaderboard_pagebench``
created and dropped on it), with the local-memory cache; bootstrap intervals are off. The
medians of ``--requests`` reads are printed as a Markdown table; nothing is asserted. One
core, as the figures in benchmarks/README.md were measured::

    taskset -c 0 python benchmarks/bench_pages.py
    taskset -c 0 python benchmarks/bench_pages.py --teams 3000 --requests 5
    taskset -c 0 python benchmarks/bench_pages.py --teams 3000 --outputs 11
    taskset -c 0 python benchmarks/bench_pages.py --teams 10000 --import
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import django
import numpy as np
import psycopg

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

BENCH_DATABASE = "leaderboard_pagebench"
LABELS = ("negative", "neutral", "positive")
GOLD_COUNTS = (400, 600, 200)
PASSWORD = "pagebench-password"
PAGES = (
    ("board", "leaderboard/"),
    ("board, calibrated", "leaderboard/?calibrated=1"),
    ("metric page (κ)", "metrics/kappa/"),
    ("disagreements", "disagreements/"),
    ("what-if, equal shares", "what-if/"),
    ("what-if, 0.2 / 0.3 / 0.5", "what-if/?target=0.2,0.3,0.5"),
    ("shake-up", "shake-up/"),
    ("CSV download", "leaderboard.csv"),
    ("JSON download", "leaderboard.json"),
    ("LaTeX download", "leaderboard.tex"),
    ("API board", "/api/tasks/{slug}/leaderboard"),
    ("API correlations", "/api/tasks/{slug}/correlations"),
    ("API what-if", "/api/tasks/{slug}/what-if?prevalence=0.2,0.3,0.5"),
)
OUTPUTS_PAGES = tuple(
    {
        "metric page (κ)": ("metric page (J)", "metrics/jaccard/"),
        "what-if, equal shares": ("what-if of label0, equal shares", "what-if/?output=label0"),
        "what-if, 0.2 / 0.3 / 0.5": ("what-if of label0, 0.3 / 0.7", "what-if/?output=label0&target=0.3,0.7"),
        "API what-if": ("API what-if of label0", "/api/tasks/{slug}/what-if?output=label0&prevalence=0.3,0.7"),
    }.get(name, (name, page))
    for name, page in PAGES
)
"""The pages of a multi-label task: its primary metric's, the what-if of its first label."""
ORGANISERS_ONLY = {"shake-up"}
"""Pages that only the organisers see while the phase runs: their logged-in visitor is the
organiser, and there is no anonymous reading."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teams", default="50,500,3000,10000", help="board sizes, comma-separated")
    parser.add_argument("--requests", type=int, default=3, help="reads per measure (cold and warm each)")
    parser.add_argument("--outputs", type=int, default=0, help="a multi-label task of this many 0/1 labels")
    parser.add_argument(
        "--import",
        dest="imported",
        action="store_true",
        help="build each board by loading a prediction file per team with import_submissions",
    )
    return parser.parse_args(argv)


def _admin_statement(server_url: str, statement: str) -> None:
    with psycopg.connect(server_url, autocommit=True, connect_timeout=5) as admin:
        admin.execute(statement)


def is_postgres(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://"))


def bench_database_url(server_url: str, scratch: Path) -> str:
    """A database of our own: a SQLite file in ``scratch``, or ``BENCH_DATABASE`` on the
    PostgreSQL server that ``server_url`` names (only used to connect)."""
    if not is_postgres(server_url):
        return f"sqlite:///{scratch / 'pagebench.sqlite3'}"
    return server_url.rsplit("/", 1)[0] + f"/{BENCH_DATABASE}"


def recreate_database(server_url: str) -> Callable[[], None]:
    """Create our own database anew (on PostgreSQL); returns how to drop it afterwards."""
    if not is_postgres(server_url):
        return lambda: None
    _admin_statement(server_url, f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")
    _admin_statement(server_url, f"CREATE DATABASE {BENCH_DATABASE}")
    return lambda: _admin_statement(server_url, f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")


# Django's settings read the database and the var directory once, at set-up: both are this
# run's own, so they are decided (from the options, which --help may end here) before it.
ARGS = parse_args(sys.argv[1:])
SERVER_URL = os.environ.get("DATABASE_URL", "")
SCRATCH = Path(tempfile.mkdtemp(prefix="pagebench-"))
os.environ["DATABASE_URL"] = bench_database_url(SERVER_URL, SCRATCH)
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ["LEADERBOARD_VAR_DIR"] = str(SCRATCH / "var")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402 (Django is set up first)
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402

from leaderboard.models import StoredFile, Submission, Task  # noqa: E402
from leaderboard.services.submissions import submission_create  # noqa: E402
from leaderboard.services.teams import team_create  # noqa: E402
from leaderboard.startup import COLLECTOR_THRESHOLDS  # noqa: E402
from scoring.engine.schemes import LABEL_VALUES, Output  # noqa: E402
from tools import factory  # noqa: E402


def _noisy(gold: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A multi-label run: each gold 0/1 flipped with a run's own error rate."""
    return np.where(rng.random(gold.shape) < rng.uniform(0.05, 0.3), 1 - gold, gold).astype(np.uint8)


class Board:
    """One board of ``teams`` teams, its participant and its organiser, logged in."""

    def __init__(self, teams: int, rng: np.random.Generator, outputs: int, imported: bool = False) -> None:
        now = timezone.now()
        self.slug = f"t{teams}"
        ids = factory.item_ids(sum(GOLD_COUNTS))
        self.csv = factory.outputs_csv if outputs else factory.labels_csv
        self.pages = OUTPUTS_PAGES if outputs else PAGES
        if outputs:
            kind = {"labels": [], "outputs": [Output(f"label{k}", LABEL_VALUES) for k in range(outputs)]}
            gold = (rng.random((len(ids), outputs)) < rng.uniform(0.05, 0.4, outputs)).astype(np.uint8)
            columns, kind["primary_metric"] = [output.name for output in kind["outputs"]], "jaccard"
        else:
            kind = {"labels": LABELS}
            gold = rng.permutation(np.repeat(np.arange(len(LABELS)), GOLD_COUNTS))
            columns = LABELS
        self.task = factory.task_create(
            slug=self.slug,
            title=f"Page benchmark, {teams} teams",
            description="benchmarks/bench_pages.py",
            gold_content=self.csv(ids, columns, gold),
            organiser_password=PASSWORD,
            organiser_name=f"organiser-{teams}",
            opens_at=now - timedelta(days=2),
            closes_at=now + timedelta(days=1),
            private_percent=50,
            max_per_day=1_000_000,
            max_total=1_000_000,
            **kind,
        )
        if imported:
            self.import_runs(teams - 1, ids, columns, gold, rng, at=now - timedelta(hours=1))
        else:
            others = factory.teams_create(task=self.task, count=teams - 1, name="Team {n:05d}")
            shared_file = StoredFile.of(name="run.csv", content=b"id,label\n")
            shared_file.save()
            runs = [
                factory.ScoredRun(
                    team=team,
                    file=shared_file,
                    matrix=None if outputs else factory.random_confusion_matrix(rng, gold_counts=GOLD_COUNTS),
                    items=_noisy(gold, rng) if outputs else None,
                    at=now - timedelta(hours=1),
                )
                for team in others
            ]
            factory.scored_submissions_create(task=self.task, runs=runs, batch_size=1000)
        self.member = get_user_model().objects.create_user(f"member-{teams}", password=PASSWORD)
        team_create(task=self.task, user=self.member, name="Member's team")
        if outputs:
            predicted = _noisy(gold, rng)
        else:
            predicted = np.where(rng.random(len(gold)) < 0.7, gold, rng.integers(0, len(LABELS), len(gold)))
        self.upload = self.csv(ids, columns, predicted)
        self.new_score()
        self.visitors = {"anonymous": Client(), "participant": Client(), "organiser": Client()}
        self.visitors["participant"].force_login(self.member)
        self.visitors["organiser"].force_login(self.task.organisers.first())

    def import_runs(
        self,
        count: int,
        ids: list[str],
        columns: Sequence[str],
        gold: np.ndarray,
        rng: np.random.Generator,
        at: datetime,
    ) -> None:
        """``count`` teams, ``Team 00000`` …, each with one prediction file (single-label: the gold
        with a team's own share of 5–70 % of its items given a random label; multi-label:
        :func:`_noisy`), loaded with ``import_submissions`` as submitted at ``at``: the command
        creates the teams and scores every file. Prints how long the import took."""
        if not count:
            return
        folder = SCRATCH / f"import-{self.slug}"
        folder.mkdir()
        for n in range(count):
            if gold.ndim > 1:
                predicted = _noisy(gold, rng)
            else:
                share = rng.uniform(0.05, 0.7)
                predicted = factory.noisy_codes(gold, n_labels=len(LABELS), error_rate=share, rng=rng)
            (folder / f"Team {n:05d}.csv").write_bytes(self.csv(ids, columns, predicted))
        report = io.StringIO()
        started = time.perf_counter()
        call_command("import_submissions", self.slug, str(folder), submitted_at=at.isoformat(), stdout=report)
        elapsed = time.perf_counter() - started
        shutil.rmtree(folder)
        summary = next(line for line in report.getvalue().splitlines() if line.startswith("Imported "))
        phase = self.task.current_phase()
        scored = Submission.objects.filter(phase=phase, status=Submission.Status.SCORED).count()
        if summary != f"Imported {count}, skipped 0 (already imported), refused 0." or scored != count:
            raise RuntimeError(f"import_submissions: {summary} ({scored} of {count} runs scored)")
        print(
            f"import: {count:,} files in {elapsed:.1f} s, {elapsed * 1000 / count:.1f} ms per file",
            file=sys.stderr,
        )

    def new_score(self) -> float:
        """The participant uploads a run, scored inside the call; milliseconds it took."""
        started = time.perf_counter()
        submission_create(task=Task.objects.get(slug=self.slug), user=self.member, name="run.csv", content=self.upload)
        return (time.perf_counter() - started) * 1000

    def path(self, page: str) -> str:
        return page.format(slug=self.slug) if page.startswith("/") else f"/tasks/{self.slug}/{page}"

    def read(self, visitor: str, page: str) -> float:
        started = time.perf_counter()
        response = self.visitors[visitor].get(self.path(page))
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise RuntimeError(f"{self.path(page)} answered HTTP {response.status_code} to the {visitor}")
        return elapsed


def measure(board: Board, requests: int) -> tuple[dict, list[float]]:
    """Per page and visitor, the median cold and warm read; every upload's time."""
    uploads: list[float] = []
    found = {}
    for name, page in board.pages:
        for visitor in visitors_of(name):
            board.read(visitor, page)  # the process warmed up for this page: imports, templates
            cold = []
            for _ in range(requests):
                uploads.append(board.new_score())
                cold.append(board.read(visitor, page))
            warm = [board.read(visitor, page) for _ in range(requests)]
            found[name, visitor] = (float(np.median(cold)), float(np.median(warm)))
    return found, uploads


def visitors_of(page: str) -> tuple[str, ...]:
    """Who reads ``page``: everyone, or the organiser alone (:data:`ORGANISERS_ONLY`)."""
    return ("organiser",) if page in ORGANISERS_ONLY else ("anonymous", "participant", "organiser")


def main(args: argparse.Namespace) -> int:
    sizes = [int(size) for size in args.teams.split(",")]
    drop = recreate_database(SERVER_URL)
    results, upload_times = {}, {}
    try:
        setup_test_environment()
        call_command("migrate", verbosity=0)
        rng = np.random.default_rng(2017)
        for size in sizes:
            started = time.perf_counter()
            board = Board(size, rng, args.outputs, args.imported)
            print(f"set-up: {size} teams in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            gc.freeze()  # as a web process does once started (leaderboard/startup.py)
            gc.set_threshold(*COLLECTOR_THRESHOLDS)
            results[size], upload_times[size] = measure(board, args.requests)
        connections.close_all()
    finally:
        drop()
        shutil.rmtree(SCRATCH, ignore_errors=True)
    built = " · built through import_submissions" if args.imported else ""
    print(
        f"\n{connection.vendor} · teams {', '.join(f'{size:,}' for size in sizes)}{built} · median of "
        f"{args.requests} reads · cold: the first read after a new score · warm: the next reads\n"
    )
    header = " | ".join(f"{size:,} teams" for size in sizes)
    print(f"| page | visitor | {header} |\n| --- | --- |{' ---: |' * len(sizes)}")
    for name, _ in board.pages:
        for visitor in visitors_of(name):
            cells = " | ".join("{:,.0f} / {:,.0f} ms".format(*results[size][name, visitor]) for size in sizes)
            print(f"| {name} | {visitor} | {cells} |")
    uploads = " | ".join(f"{np.median(upload_times[size]):,.0f} ms" for size in sizes)
    print(f"| one new score (upload, scoring, writes, invalidation) | participant | {uploads} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
