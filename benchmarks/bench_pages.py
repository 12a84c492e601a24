"""How fast the result pages answer on a 500-team board, in process, through Django's test Client.

The set-up: a task of three labels, ``--teams`` teams, each with ``--older`` older scored
submissions and a latest one, written directly as Submission rows whose scores come from
``scoring.engine.suite.score_matrix`` on random confusion matrices (seconds, not minutes).
It runs against a throw-away database of its own: a SQLite file in a temporary directory, or,
when ``DATABASE_URL`` names a PostgreSQL server, the database ``leaderboard_pagebench`` on that
server, created and dropped by this script (the database the URL names is only used to
connect; none of its tables is touched).

It times the leaderboard (cold cache: cleared before every request; warm cache), the CSV
export and the disagreements page (cold and warm), and prints p50/p95 as a Markdown table.
Nothing is asserted.

    python benchmarks/bench_pages.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test python benchmarks/bench_pages.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import django
import numpy as np
import psycopg

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

BENCH_DATABASE = "leaderboard_pagebench"
LABELS = ("negative", "neutral", "positive")
GOLD = b"id,label\n1,negative\n2,neutral\n3,positive\n"
GOLD_COUNTS = (3_972, 5_937, 2_375)
"""The class counts of the random confusion matrices: the demo's (SemEval-2017 Task 4A)."""
SLUG = "pagebench"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teams", type=int, default=500)
    parser.add_argument("--older", type=int, default=1, help="older scored submissions per team")
    parser.add_argument("--requests", type=int, default=20, help="requests per measure")
    parser.add_argument("--counting", default="latest", choices=("latest", "best", "chosen"))
    return parser.parse_args(argv)


def _admin_statement(server_url: str, statement: str) -> None:
    with psycopg.connect(server_url, autocommit=True, connect_timeout=5) as admin:
        admin.execute(statement)


def is_postgres(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://"))


def bench_database_url(server_url: str, scratch: Path) -> str:
    """The URL of a database of our own: a SQLite file in ``scratch``, or ``BENCH_DATABASE`` on
    the PostgreSQL server that ``server_url`` names."""
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

from django.core.cache import cache  # noqa: E402 (Django is set up first)
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402

from leaderboard.models import StoredFile, Task  # noqa: E402
from tools import factory  # noqa: E402


def build(args: argparse.Namespace, rng: np.random.Generator) -> Task:
    now = timezone.now()
    task = factory.task_create(
        slug=SLUG,
        title="Page benchmark",
        description="benchmarks/bench_pages.py",
        labels=LABELS,
        gold_content=GOLD,
        organiser_password="pagebench-password",
        opens_at=now - timedelta(days=2),
        closes_at=now + timedelta(days=1),
        counting=args.counting,
    )
    teams = factory.teams_create(task=task, count=args.teams, name="Team {n:03d} <&>")
    shared_file = StoredFile.of(name="run.csv", content=b"id,label\n")
    shared_file.save()
    factory.scored_submissions_create(
        task=task,
        runs=[
            factory.ScoredRun(
                team=team,
                file=shared_file,
                matrix=factory.random_confusion_matrix(rng, gold_counts=GOLD_COUNTS),
                at=now - timedelta(hours=age_h + 1),
            )
            for team in teams
            for age_h in range(args.older, -1, -1)
        ],
        batch_size=500,
    )
    return task


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    p50, p95 = np.percentile(samples_ms, [50, 95])
    return float(p50), float(p95)


def time_requests(client, path: str, *, count: int, before: Callable[[], None] | None = None) -> list[float]:
    client.get(path)  # warm imports, template loading and connections
    samples = []
    for _ in range(count):
        if before:
            before()
        started = time.perf_counter()
        response = client.get(path)
        samples.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered HTTP {response.status_code}")
    return samples


def main(args: argparse.Namespace) -> int:
    drop = recreate_database(SERVER_URL)
    try:
        setup_test_environment()
        call_command("migrate", verbosity=0)
        started = time.perf_counter()
        build(args, np.random.default_rng(2017))
        print(f"set-up: {args.teams} teams built in {time.perf_counter() - started:.1f} s", file=sys.stderr)

        client = Client()
        board = f"/tasks/{SLUG}/leaderboard/"
        measures = [
            ("leaderboard, cold cache", board, cache.clear),
            ("leaderboard, warm cache", board, None),
            ("leaderboard calibrated, warm cache", board + "?calibrated=1", None),
            ("CSV export", f"/tasks/{SLUG}/leaderboard.csv", None),
            ("disagreements, cold cache", f"/tasks/{SLUG}/disagreements/", cache.clear),
            ("disagreements, warm cache", f"/tasks/{SLUG}/disagreements/", None),
        ]
        print(
            f"\n{connection.vendor} · {args.teams} teams × {args.older + 1} scored submissions · "
            f"counting {args.counting} · {args.requests} requests per row\n"
        )
        print("| page | p50 | p95 |\n| --- | ---: | ---: |")
        for what, path, before in measures:
            p50, p95 = percentiles(time_requests(client, path, count=args.requests, before=before))
            print(f"| {what} | {p50:,.0f} ms | {p95:,.0f} ms |")
        connections.close_all()
    finally:
        drop()
        shutil.rmtree(SCRATCH, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
