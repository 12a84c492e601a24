"""Faults injected into the scaled set-up during a rush of uploads: does any run get lost, stuck,
or scored twice, and does anyone get a 500?

What runs, on loopback, all ended afterwards: PostgreSQL (a database of its own,
``leaderboard_faults``, made anew), a Redis server of its own on a free port (so that it can be
stopped without touching anyone else's), ``--rq-workers`` scoring workers (``make worker``'s
command, with the settings' defaults: recovery sweep every RECOVERY_EVERY_S, a run in scoring
taken for lost after SCORING_STUCK_AFTER_S) and gunicorn with the production settings. No
operator acts: no ``rescore_pending``, no restart of a killed worker.

For each fault, a rush: ``--clients`` teams log in through the form and each uploads
``--uploads`` files of 12,284 lines through the upload form, one every ``--pause-s`` seconds,
while two anonymous readers load the leaderboard and the API's board without pause. A few
seconds in, the fault:

- **Redis stopped** for ``--redis-down-s`` seconds, then started again, empty (it keeps nothing
  on disk: every job it held is gone);
- **a worker SIGKILLed** while it scores (the worker and any child of its, as a machine that
  loses power);
- **PostgreSQL connections dropped** (``pg_terminate_backend`` of every connection to the
  database: the web's, the workers');
- **a worker stopped** (SIGSTOP) for ``--worker-stopped-s`` seconds while it scores, then
  continued.

Then it waits for every stored run to finish and prints a Markdown table: fault, runs uploaded
(stored), scored once, lost (stored but not scored by the end), scored twice, answers 500,
answers 503 (with Retry-After: allowed while the database is away), and the time to recover
(from the fault's start until the last stored run is scored). Nothing is asserted.

    python benchmarks/faults.py          # or: make faults
    python benchmarks/faults.py --faults redis,kill
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import django
import numpy as np

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from tools.processes import (  # noqa: E402 (the repository goes on the path first)
    ManagedProcess,
    start_process,
    start_worker,
    wait_listening,
    wait_until,
)
from tools.scaled import (  # noqa: E402
    PASSWORD,
    SUBMISSION_PATH,
    Browser,
    answers,
    database_admin,
    database_url,
    environment,
    free_port,
    log_in,
    multipart,
    recreate_database,
)

LABELS = ("negative", "neutral", "positive")
GOLD_COUNTS = (3_972, 5_937, 2_375)
DATABASE = "leaderboard_faults"
SLUG = "faults"
FAULTS = ("redis", "kill", "postgres", "stop")
FAULT_NAMES = {
    "redis": "Redis stopped {redis_down_s:g} s, restarted empty",
    "kill": "a worker SIGKILLed while it scores",
    "postgres": "PostgreSQL connections dropped",
    "stop": "a worker stopped (SIGSTOP) {worker_stopped_s:g} s while it scores",
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"which, in order (of {', '.join(FAULTS)})")
    parser.add_argument("--clients", type=int, default=6, help="uploading teams")
    parser.add_argument("--uploads", type=int, default=6, help="uploads per team and fault")
    parser.add_argument("--pause-s", type=float, default=2.0, help="between two uploads of a team")
    parser.add_argument("--fault-after-s", type=float, default=3.0, help="the fault starts this long into the rush")
    parser.add_argument("--redis-down-s", type=float, default=20.0)
    parser.add_argument("--worker-stopped-s", type=float, default=60.0)
    parser.add_argument("--rq-workers", type=int, default=2)
    parser.add_argument("--recovery-timeout-s", type=float, default=300.0)
    parser.add_argument(
        "--pg-admin-url", default=os.environ.get("PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    )
    args = parser.parse_args(argv)
    args.faults = [name.strip() for name in args.faults.split(",") if name.strip()]
    unknown = set(args.faults) - set(FAULTS)
    if unknown:
        parser.error(f"unknown fault(s): {', '.join(sorted(unknown))}")
    return args


ARGS = parse_args(sys.argv[1:])
RUN_DIR = Path(tempfile.mkdtemp(prefix="faults-"))
PORT, REDIS_PORT = free_port(), free_port()
REDIS_URL = f"redis://127.0.0.1:{REDIS_PORT}/0"
ENV = environment(
    database_url=database_url(ARGS.pg_admin_url, DATABASE), redis_url=REDIS_URL, run_dir=RUN_DIR, port=PORT
)
os.environ.update(ENV)
django.setup()

import redis  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from django.utils import timezone  # noqa: E402
from rq.job import Job  # noqa: E402
from rq.registry import StartedJobRegistry  # noqa: E402

from leaderboard.models import Submission  # noqa: E402
from tools import factory  # noqa: E402


@dataclass
class SetUp:
    task_id: int
    ids: list[str]
    gold: np.ndarray
    usernames: list[str]


def build(args: argparse.Namespace, rng: np.random.Generator) -> SetUp:
    ids = factory.item_ids(sum(GOLD_COUNTS))
    gold = rng.permutation(np.repeat(np.arange(len(LABELS)), GOLD_COUNTS))
    now = timezone.now()
    task = factory.task_create(
        slug=SLUG,
        title="Faults",
        description="benchmarks/faults.py",
        labels=LABELS,
        gold_content=factory.labels_csv(ids, LABELS, gold),
        organiser_password=PASSWORD,
        opens_at=now - timedelta(days=1),
        closes_at=now + timedelta(days=1),
        max_per_day=1000,
        max_total=1000,
    )
    members = factory.member_teams_create(task=task, count=args.clients, password=PASSWORD)
    return SetUp(task.pk, ids, gold, [member.user.username for member in members])


# --- the processes ---------------------------------------------------------------------------------


@dataclass
class Stack:
    redis: ManagedProcess
    workers: list[ManagedProcess]
    web: ManagedProcess
    started: list[ManagedProcess] = field(default_factory=list)

    def all(self) -> list[ManagedProcess]:
        return [self.redis, *self.workers, self.web, *self.started]


def start_redis(name: str) -> ManagedProcess:
    process = start_process(
        name=name,
        args=["redis-server", "--port", str(REDIS_PORT), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        env=dict(os.environ),
        log_dir=RUN_DIR,
    )
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    wait_until(lambda: _pings(client), timeout_s=20, what="Redis to answer", interval_s=0.1)
    return process


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


def busy_worker(stack: Stack) -> ManagedProcess:
    """A worker that is scoring now: one named by a job that RQ has started. A job lasts a few
    tens of milliseconds: the started jobs are read every 2 ms, their workers in one round trip.
    Not RQ's set of workers: a worker that waited out a Redis restarted empty goes on working
    without being in it again."""
    client = redis.Redis.from_url(REDIS_URL)
    started = StartedJobRegistry.key_template.format("default")

    def found() -> ManagedProcess | None:
        entries = client.zrange(started, 0, -1)
        if not entries:
            return None
        pipeline = client.pipeline(transaction=False)
        for entry in entries:
            pipeline.hget(Job.key_for(StartedJobRegistry.parse_job_id(entry)), "worker_name")
        # A worker restarted after a Redis outage carries its number: faults-0.2 is faults-0.
        busy = {name.decode().split(".")[0] for name in pipeline.execute() if name}
        return next((w for w in stack.workers if w.name in busy and w.popen.poll() is None), None)

    return wait_until(found, timeout_s=60, what="a worker to be scoring", interval_s=0.002)


# --- one rush ---------------------------------------------------------------------------------------


@dataclass
class Outcome:
    uploads: list[int] = field(default_factory=list)
    """The stored runs' ids, as the upload answers named them."""
    statuses: Counter = field(default_factory=Counter)
    """Every HTTP status answered to the uploads and the readers."""
    fault_started: float = 0.0
    fault_ended: float = 0.0


def uploader(browser: Browser, token: str, bodies: list[tuple[bytes, str]], pause_s: float, out: Outcome) -> None:
    for body in bodies:
        try:
            answer = browser.request("POST", f"/tasks/{SLUG}/submit/", body=body[0], content_type=body[1])
        except OSError:
            out.statuses["no answer"] += 1
            continue
        out.statuses[answer.status] += 1
        accepted = SUBMISSION_PATH.search(answer.location) if answer.status == 302 else None
        if accepted:
            out.uploads.append(int(accepted.group(1)))
        time.sleep(pause_s)


def reader(port: int, done: threading.Event, out: Outcome) -> None:
    browser = Browser(port, accepts_gzip=True, keep_alive=True)
    pages = (f"/tasks/{SLUG}/leaderboard/", f"/api/tasks/{SLUG}/leaderboard")
    n = 0
    while not done.is_set():
        try:
            out.statuses[browser.get(pages[n % 2]).status] += 1
        except OSError:
            out.statuses["no answer"] += 1
            browser = Browser(port, accepts_gzip=True, keep_alive=True)
        n += 1
        time.sleep(0.05)


def inject(fault: str, args: argparse.Namespace, stack: Stack, out: Outcome) -> None:
    time.sleep(args.fault_after_s)
    out.fault_started = time.perf_counter()
    if fault == "redis":
        stack.redis.kill()
        time.sleep(args.redis_down_s)
        stack.redis = start_redis("redis-again")
    elif fault == "kill":
        victim = busy_worker(stack)
        victim.kill()
        stack.workers.remove(victim)
    elif fault == "postgres":
        database_admin(
            args.pg_admin_url,
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{DATABASE}' "
            "AND pid <> pg_backend_pid()",
        )
    elif fault == "stop":
        victim = busy_worker(stack)
        for pid in victim.pids():
            os.kill(pid, signal.SIGSTOP)
        time.sleep(args.worker_stopped_s)
        for pid in victim.pids():
            os.kill(pid, signal.SIGCONT)
    out.fault_ended = time.perf_counter()


def rush(fault: str, args: argparse.Namespace, setup: SetUp, stack: Stack, rng: np.random.Generator) -> dict:
    browsers = [Browser(PORT) for _ in setup.usernames]
    tokens = [log_in(browser, name, task_slug=SLUG) for browser, name in zip(browsers, setup.usernames, strict=True)]
    bodies = [
        [
            multipart(
                {"csrfmiddlewaretoken": token, "description": f"{fault} {n}"},
                file_field="file",
                file_name=f"{fault}-{n}.csv",
                content=factory.labels_csv(
                    setup.ids,
                    LABELS,
                    factory.noisy_codes(setup.gold, n_labels=len(LABELS), error_rate=rng.uniform(0.1, 0.7), rng=rng),
                ),
            )
            for n in range(args.uploads)
        ]
        for token in tokens
    ]
    out = Outcome()
    done = threading.Event()
    threads = [
        threading.Thread(target=uploader, args=(browser, token, own, args.pause_s, out))
        for browser, token, own in zip(browsers, tokens, bodies, strict=True)
    ]
    readers = [threading.Thread(target=reader, args=(PORT, done, out)) for _ in range(2)]
    fault_thread = threading.Thread(target=inject, args=(fault, args, stack, out))
    for thread in (*threads, *readers, fault_thread):
        thread.start()
    for thread in (*threads, fault_thread):
        thread.join()
    runs = Submission.objects.filter(phase__task_id=setup.task_id, description__startswith=f"{fault} ")

    def finished() -> bool:
        connections.close_all()  # this process's own connection may have been dropped too
        return not runs.filter(status__in=[Submission.Status.QUEUED, Submission.Status.SCORING]).exists()

    try:
        wait_until(finished, timeout_s=args.recovery_timeout_s, what="every run to be scored", interval_s=0.25)
        recovered = f"{time.perf_counter() - out.fault_started:.0f} s"
    except AssertionError:
        recovered = f"not within {args.recovery_timeout_s:g} s"
    done.set()
    for thread in readers:
        thread.join()
    stored = set(runs.values_list("pk", flat=True))
    scored = runs.filter(status=Submission.Status.SCORED)
    return {
        "fault": FAULT_NAMES[fault].format(**vars(args)),
        "uploaded": f"{len(stored)}",
        "scored once": f"{scored.filter(score_count=1).count()}",
        "lost": f"{len(stored - set(scored.values_list('pk', flat=True)))}",
        "scored twice": f"{runs.filter(score_count__gt=1).count()}",
        "stored without an answer": f"{len(stored - set(out.uploads))}",
        "500 answers": f"{sum(n for status, n in out.statuses.items() if status == 500)}",
        "503 answers": f"{out.statuses.get(503, 0)}",
        "other errors": ", ".join(
            f"{n}× {status}" for status, n in out.statuses.items() if status not in (200, 302, 500, 503)
        )
        or "none",
        "time to recover": recovered,
    }


# --- the run -----------------------------------------------------------------------------------------


def main(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(2026)
    recreate_database(args.pg_admin_url, DATABASE)
    stack = None
    failed = True
    try:
        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        setup = build(args, rng)
        full_env = {**os.environ, **ENV}
        redis_process = start_redis("redis")
        workers = [start_worker(name=f"faults-{n}", env=full_env, log_dir=RUN_DIR) for n in range(args.rq_workers)]
        web = start_process(
            name="gunicorn",
            args=[sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py"],
            env=full_env,
            log_dir=RUN_DIR,
        )
        stack = Stack(redis=redis_process, workers=workers, web=web)
        wait_listening(workers, redis_client=redis.Redis.from_url(REDIS_URL), timeout_s=60)
        wait_until(lambda: answers(PORT), timeout_s=60, what="gunicorn to answer", interval_s=0.2)
        rows = []
        for fault in args.faults:
            if len([w for w in stack.workers if w.popen.poll() is None]) < args.rq_workers:
                # A machine that lost a worker gets it back from its supervisor between faults.
                replacement = start_worker(name=f"faults-again-{fault}", env=full_env, log_dir=RUN_DIR)
                stack.workers.append(replacement)
                wait_listening([replacement], redis_client=redis.Redis.from_url(REDIS_URL), timeout_s=60)
            print(f"fault: {fault} …", file=sys.stderr)
            rows.append(rush(fault, args, setup, stack, rng))
        columns = list(rows[0])
        print(
            f"\n{os.cpu_count()} cores · {args.rq_workers} scoring workers · {args.clients} teams × {args.uploads} "
            f"uploads of {len(setup.ids):,} lines, one every {args.pause_s:g} s · fault {args.fault_after_s:g} s in\n"
        )
        print("| " + " | ".join(columns) + " |")
        print("| " + " | ".join("---" for _ in columns) + " |")
        for row in rows:
            print("| " + " | ".join(row[column] for column in columns) + " |")
        failed = False
    finally:
        if stack is not None:
            for process in stack.all():
                process.kill()
        connections.close_all()
        database_admin(args.pg_admin_url, f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        if failed:
            print(f"logs kept in {RUN_DIR}", file=sys.stderr)
        else:
            shutil.rmtree(RUN_DIR, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
