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

import numpy as np

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

BENCH_DATABASE = "leaderboard_pagebench"
LABELS = ("negative", "neutral", "positive")
GOLD = b"id,label\n1,negative\n2,neutral\n3,positive\n"
SLUG = "pagebench"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teams", type=int, default=500)
    parser.add_argument("--older", type=int, default=1, help="older scored submissions per team")
    parser.add_argument("--requests", type=int, default=20, help="requests per measure")
    parser.add_argument("--counting", default="latest", choices=("latest", "best", "chosen"))
    return parser.parse_args(argv)


def _admin_statement(server_url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(server_url, autocommit=True, connect_timeout=5) as admin:
        admin.execute(statement)


def bench_database_url(scratch: Path) -> tuple[str, Callable[[], None]]:
    """The URL of a database of our own, and how to drop it afterwards."""
    given = os.environ.get("DATABASE_URL", "")
    if not given.startswith(("postgres://", "postgresql://")):
        return f"sqlite:///{scratch / 'pagebench.sqlite3'}", lambda: None
    _admin_statement(given, f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")
    _admin_statement(given, f"CREATE DATABASE {BENCH_DATABASE}")
    return given.rsplit("/", 1)[0] + f"/{BENCH_DATABASE}", lambda: _admin_statement(
        given, f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)"
    )


def random_matrix(rng: np.random.Generator) -> np.ndarray:
    """A 3×3 confusion matrix (rows predicted, columns gold) of a better-than-chance system."""
    gold_counts = np.array([3_972, 5_937, 2_375])
    accuracy = rng.uniform(0.3, 0.95)
    columns = []
    for gold, count in enumerate(gold_counts):
        share = np.full(len(gold_counts), (1 - accuracy) / (len(gold_counts) - 1))
        share[gold] = accuracy
        columns.append(rng.multinomial(count, share))
    return np.array(columns).T


def build(args: argparse.Namespace, rng: np.random.Generator):
    from django.contrib.auth import get_user_model
    from django.utils import timezone
    from scoring.storage import report_fields

    from leaderboard import services
    from leaderboard.models import StoredFile, Submission, Team
    from scoring.engine.suite import score_matrix

    now = timezone.now()
    organiser = get_user_model().objects.create_user("organiser", password="pagebench-password")
    task = services.task_create(
        organiser=organiser,
        slug=SLUG,
        title="Page benchmark",
        description="benchmarks/bench_pages.py",
        labels=list(LABELS),
        gold_name="gold.csv",
        gold_content=GOLD,
        primary_metric="macro_recall",
        opens_at=now - timedelta(days=2),
        closes_at=now + timedelta(days=1),
        counting=args.counting,
    )
    teams = Team.objects.bulk_create([Team(task=task, name=f"Team {n:03d} <&>") for n in range(args.teams)])
    shared_file = StoredFile.of(name="run.csv", content=b"id,label\n")
    shared_file.save()
    submissions = []
    for team in teams:
        for age_h in range(args.older, -1, -1):
            fields = report_fields(score_matrix(random_matrix(rng), labels=LABELS))
            moment = now - timedelta(hours=age_h + 1)
            submissions.append(
                Submission(
                    task=task,
                    team=team,
                    file=shared_file,
                    kind=Submission.Kind.HARD,
                    status=Submission.Status.SCORED,
                    created_at=moment,
                    scored_at=moment,
                    scored_gold_version=task.gold_version,
                    score_count=1,
                    **fields,
                )
            )
    Submission.objects.bulk_create(submissions, batch_size=500)
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


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="pagebench-"))
    database_url, drop = bench_database_url(scratch)
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    os.environ["LEADERBOARD_VAR_DIR"] = str(scratch / "var")
    try:
        import django

        django.setup()
        from django.core.cache import cache
        from django.core.management import call_command
        from django.db import connection, connections
        from django.test import Client
        from django.test.utils import setup_test_environment

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
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
