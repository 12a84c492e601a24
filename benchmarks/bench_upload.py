"""What an uploader waits for as a board grows: an upload through the form into a phase of 50,
500, 3,000 and 10,000 teams, in the set-up a person runs, with every derived result on as it ships.

    python benchmarks/bench_upload.py --setup embedded   # make demo's set-up
    python benchmarks/bench_upload.py --setup rq         # PostgreSQL and Redis on loopback

- **embedded**: the README's ``make demo``: SQLite in a directory of its own, ``manage.py
  runserver`` with DEBUG off, scoring inside the upload request, the intervals (1,000
  replicates) and the analysis in the web process's threads, their pauses as shipped.
- **rq**: the scaled set-up of ``make load`` (tools/scaled.py): PostgreSQL (a database of its own,
  ``leaderboard_uploadbench``), Redis (database 14, flushed), two RQ workers that score and
  compute the derived results, gunicorn, production settings.

For each size, a phase of the SemEval-2017 Task 4A test set's size (12,284 items) whose other
teams' scored runs are written as rows (``tools.factory.scored_phase``, with per-item
predictions), and one participant who logs in through the log-in form and uploads files of
12,284 lines through the upload form, timed as the client sees them, until the answer (the
redirect to the run):

- **idle**: an upload once the phase's derived results are of its current scores (the board's
  set-up, or the previous upload, fully reflected);
- **busy**: the next upload right after it, while its derived results are being computed.

Medians of ``--uploads`` of each are printed as a Markdown table; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import django
import numpy as np
import redis

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from tools.processes import ManagedProcess, start_process, start_worker, wait_listening, wait_until  # noqa: E402
from tools.scaled import (  # noqa: E402
    PASSWORD,
    SUBMISSION_PATH,
    Browser,
    answers,
    database_url,
    environment,
    free_port,
    log_in,
    multipart,
    recreate_database,
)

BENCH_DATABASE = "leaderboard_uploadbench"
SETTLED_WITHIN_S = 900
"""How long the derived results of a size may take to be of its scores (10,000 teams' intervals
take about a minute on two cores)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--setup", choices=("embedded", "rq"), required=True)
    parser.add_argument("--teams", default="50,500,3000,10000", help="board sizes, comma-separated")
    parser.add_argument("--uploads", type=int, default=3, help="uploads of each kind (idle, busy) per size")
    parser.add_argument(
        "--pg-admin-url", default=os.environ.get("PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    )
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14"))
    return parser.parse_args(argv)


# The settings are read once, at set-up: this process reads the database the server writes.
ARGS = parse_args(sys.argv[1:])
RUN_DIR = Path(tempfile.mkdtemp(prefix="upload-bench-"))
PORT = free_port()
STATIC = {"STATIC_ROOT": str(BASE_DIR / "var" / "staticfiles")}
"""The repository's collected static files (collected once, compressed once: static_storage.py)."""
if ARGS.setup == "rq":
    ENV = environment(
        database_url=database_url(ARGS.pg_admin_url, BENCH_DATABASE),
        redis_url=ARGS.redis_url,
        run_dir=RUN_DIR,
        port=PORT,
        **STATIC,
    )
else:
    ENV = {
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DEBUG": "false",
        "LEADERBOARD_VAR_DIR": str(RUN_DIR / "var"),
        "LOG_LEVEL": "WARNING",
        **STATIC,
    }
    os.environ.pop("DATABASE_URL", None)
    (RUN_DIR / "var").mkdir()
os.environ.update(ENV)
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402 (Django is set up first)
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402

from leaderboard import derived  # noqa: E402
from leaderboard.models import Phase, Submission  # noqa: E402
from leaderboard.selectors.boards import board_data  # noqa: E402
from leaderboard.services.teams import team_create  # noqa: E402
from leaderboard.uploads import stored_gold  # noqa: E402
from tools import factory  # noqa: E402


def settled(phase_id: int, submission_id: int | None) -> bool:
    """The upload scored, and every derived result of the phase of its current scores."""
    if submission_id and not Submission.objects.filter(pk=submission_id, status=Submission.Status.SCORED).exists():
        return False
    phase = Phase.objects.select_related("task").get(pk=phase_id)
    data = board_data(phase)
    current = all(
        kind.model.objects.filter(phase=phase, stamp=kind.stamp(phase, data)).exists()
        for kind in derived.KINDS.values()
        if kind.enabled()
    )
    connections.close_all()
    return current


class Participant:
    """A team member of a phase of ``teams`` teams, logged in through the form."""

    def __init__(self, teams: int, rng: np.random.Generator) -> None:
        self.slug = f"upload-{teams}"
        phase = factory.scored_phase(
            slug=self.slug,
            title=f"Upload benchmark, {teams} teams",
            description="",
            password=PASSWORD,
            teams=teams - 1,
            organiser=f"organiser-{teams}",
        )
        Phase.objects.filter(pk=phase.pk).update(max_per_day=100_000, max_total=100_000)
        self.phase_id = phase.pk
        user = get_user_model().objects.create_user(f"member-{teams}", password=PASSWORD)
        team_create(task=phase.task, user=user, name="The uploading team")
        gold = stored_gold(phase)
        self.ids, self.gold = list(gold.id_array.to_pylist()), gold.codes
        self.browser = Browser(PORT)
        self.token = log_in(self.browser, user.username, task_slug=self.slug)
        self.rng = rng

    def upload(self) -> tuple[float, int]:
        """One upload through the form: milliseconds until the answer, and the run's id."""
        predicted = factory.noisy_codes(self.gold, n_labels=3, error_rate=self.rng.uniform(0.2, 0.6), rng=self.rng)
        body, content_type = multipart(
            {"csrfmiddlewaretoken": self.token},
            file_field="file",
            file_name="run.csv",
            content=factory.labels_csv(self.ids, factory.SEMEVAL_LABELS, predicted),
        )
        answer = self.browser.request("POST", f"/tasks/{self.slug}/submit/", body=body, content_type=content_type)
        accepted = SUBMISSION_PATH.search(answer.location) if answer.status == 302 else None
        if accepted is None:
            raise RuntimeError(f"the upload was answered HTTP {answer.status} {answer.location}")
        return answer.latency_ms, int(accepted.group(1))


def measure(teams: int, uploads: int, rng: np.random.Generator) -> tuple[list[float], list[float]]:
    started = time.perf_counter()
    participant = Participant(teams, rng)
    wait_until(lambda: settled(participant.phase_id, None), timeout_s=SETTLED_WITHIN_S, what="the board's results")
    print(f"set-up: {teams:,} teams in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    idle, busy = [], []
    for _ in range(uploads):
        latency_ms, _ = participant.upload()
        idle.append(latency_ms)
        latency_ms, last = participant.upload()
        busy.append(latency_ms)
        wait_until(lambda last=last: settled(participant.phase_id, last), timeout_s=SETTLED_WITHIN_S, what="results")
    return idle, busy


def servers() -> list[ManagedProcess]:
    full_env = {**os.environ, **ENV}
    if ARGS.setup == "embedded":
        command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{PORT}", "--noreload"]
        return [start_process(name="runserver", args=command, env=full_env, log_dir=RUN_DIR)]
    workers = [start_worker(name=f"upload-{n}", env=full_env, log_dir=RUN_DIR) for n in range(2)]
    web = start_process(
        name="gunicorn",
        args=[sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py"],
        env=full_env,
        log_dir=RUN_DIR,
    )
    wait_listening(workers, redis_client=redis.Redis.from_url(ARGS.redis_url), timeout_s=60)
    return [*workers, web]


def main(args: argparse.Namespace) -> int:
    sizes = [int(size) for size in args.teams.split(",")]
    if args.setup == "rq":
        recreate_database(args.pg_admin_url, BENCH_DATABASE)
        redis.Redis.from_url(args.redis_url).flushdb()
    processes: list[ManagedProcess] = []
    results = {}
    try:
        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        connections.close_all()
        processes = servers()
        wait_until(lambda: answers(PORT), timeout_s=120, what="the server to answer", interval_s=0.2)
        rng = np.random.default_rng(2017)
        for size in sizes:
            results[size] = measure(size, args.uploads, rng)
    finally:
        for process in processes:
            process.kill()
        connections.close_all()
        shutil.rmtree(RUN_DIR, ignore_errors=True)
    what = "embedded (runserver, SQLite, derived results in its threads)" if args.setup == "embedded" else "RQ"
    print(f"\n{what} · teams {', '.join(f'{size:,}' for size in sizes)} · median of {args.uploads} uploads\n")
    print(f"| upload answered | {' | '.join(f'{size:,} teams' for size in sizes)} |")
    print(f"| --- |{' ---: |' * len(sizes)}")
    for index, name in enumerate(("idle: the board's results current", "busy: right after an upload")):
        print(f"| {name} | {' | '.join(f'{statistics.median(results[size][index]):,.0f} ms' for size in sizes)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
