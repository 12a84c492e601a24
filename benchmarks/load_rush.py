"""The closing-deadline rush, against the scaled set-up, on loopback, in bounded time.

What runs: PostgreSQL (a database of its own, ``leaderboard_bench``, dropped and created anew
each run), Redis (database 14, flushed), ``--rq-workers`` RQ workers, and gunicorn
(``config/gunicorn.py``) with the production settings (tools/scaled.py): DEBUG off, a
throw-away SECRET_KEY, ALLOWED_HOSTS=127.0.0.1, whitenoise, plain HTTP through
INSECURE_HTTP_FOR_LOCAL_BENCHMARK.

The set-up, built in this process through the services: a task of 12,284 gold items, 500
teams, and a scored submission for each team that is not in the rush, so that the board has
500 rows (those are scored here with the engine's own functions, to build the board fast).
The rush: 50 clients log in through the log-in form (with its CSRF token) and post 200 files
of 12,284 lines through the upload form, before a deadline set a few minutes ahead, while
anonymous readers load the leaderboard and the disagreements page as browsers do: each in a
process of its own, saying ``Accept-Encoding: gzip`` and keeping its connection open. Then it
waits for the workers to score everything, measures the leaderboard again at rest, and prints
a Markdown table. Nothing is asserted; every process it starts is
ended, whatever happens.

Before the rush, as on a live site where a board has been read before its deadline, the
intervals of the scores so far are computed and each page is read once on an empty cache (that
first, cold read is reported apart); ``--cold`` starts the rush without that read.

    python benchmarks/load_rush.py              # or: make load
    python benchmarks/load_rush.py --profile    # and where the CPU of one upload and of the pages goes
    python benchmarks/load_rush.py --spy        # and where the rush's CPU went, part by part (py-spy)
"""

from __future__ import annotations

import argparse
import cProfile
import io
import multiprocessing
import os
import pstats
import re
import runpy
import shutil
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import django
import numpy as np
import redis

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
    REQUEST_TIMEOUT_S,
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
from tools.spy import Spy, own_frames, shares  # noqa: E402

LABELS = ("negative", "neutral", "positive")
GOLD_COUNTS = (3_972, 5_937, 2_375)
"""The demo's class counts (SemEval-2017 Task 4A): 12,284 items."""
BENCH_DATABASE = "leaderboard_bench"
SLUG = "rush"
REFUSAL = re.compile(rb"The file was refused: ([^<]+)")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=200)
    parser.add_argument("--clients", type=int, default=50, help="uploading clients, each a team")
    parser.add_argument("--readers", type=int, default=6, help="anonymous clients reading the board meanwhile")
    parser.add_argument("--teams", type=int, default=500)
    parser.add_argument("--rq-workers", type=int, default=2)
    parser.add_argument("--web-workers", type=int, help="gunicorn workers (default: config/gunicorn.py's)")
    parser.add_argument("--deadline-s", type=float, default=240, help="the task closes this long after the rush starts")
    parser.add_argument("--scoring-timeout-s", type=float, default=300)
    parser.add_argument(
        "--pg-admin-url", default=os.environ.get("PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    )
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14"))
    parser.add_argument("--keep-db", action="store_true", help=f"leave {BENCH_DATABASE} behind for inspection")
    parser.add_argument(
        "--profile", action="store_true", help="profile the leaderboard page, and one upload part by part"
    )
    parser.add_argument(
        "--spy", action="store_true", help="sample the web and worker processes during the rush (py-spy): CPU by part"
    )
    parser.add_argument("--cold", action="store_true", help="start the rush on an empty cache (no read before it)")
    args = parser.parse_args(argv)
    if not 0 < args.clients <= args.teams or args.uploads < 1:
        parser.error("need 1 <= clients <= teams and at least one upload")
    return args


# --- Django, for this run ----------------------------------------------------------------------

# The settings read this run's options, database, directory and port once, at set-up; so they
# are decided here (--help ends at the options) and every process of the run gets the same.
ARGS = parse_args(sys.argv[1:])
RUN_DIR = Path(tempfile.mkdtemp(prefix="load-rush-"))
SPY_DIR = Path(tempfile.mkdtemp(prefix="load-rush-spy-")) if ARGS.spy else RUN_DIR
"""py-spy's samples and logs (``--spy``), kept after the run for a closer look."""
PORT = free_port()
ENV = environment(
    database_url=database_url(ARGS.pg_admin_url, BENCH_DATABASE),
    redis_url=ARGS.redis_url,
    run_dir=RUN_DIR,
    port=PORT,
    **({"GUNICORN_WORKERS": str(ARGS.web_workers)} if ARGS.web_workers else {}),
)
os.environ.update(ENV)
django.setup()

from django.conf import settings  # noqa: E402 (Django is set up first)
from django.contrib.auth.models import User  # noqa: E402
from django.core.files.uploadedfile import SimpleUploadedFile  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from django.db.models import Max  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from leaderboard import derived  # noqa: E402
from leaderboard.models import Phase, StoredFile, Submission, Task  # noqa: E402
from leaderboard.results_cache import results_changed  # noqa: E402
from leaderboard.selectors.boards import leaderboard  # noqa: E402
from leaderboard.services.scoring import submission_score  # noqa: E402
from scoring.engine.confusion import hard_confusion  # noqa: E402
from tools import factory  # noqa: E402

# --- the set-up ---------------------------------------------------------------------------------


@dataclass
class Setup:
    task_id: int
    ids: list[str]
    gold: np.ndarray
    rush_usernames: list[str]
    rush_team_ids: list[int]


def build(args: argparse.Namespace, rng: np.random.Generator) -> Setup:
    """Task, users and teams through the services; the other teams' scored submissions in bulk."""
    ids = factory.item_ids(sum(GOLD_COUNTS))
    gold = rng.permutation(np.repeat(np.arange(len(LABELS)), GOLD_COUNTS))
    now = timezone.now()
    task = factory.task_create(
        slug=SLUG,
        title="Load rush",
        description="benchmarks/load_rush.py",
        labels=LABELS,
        gold_content=factory.labels_csv(ids, LABELS, gold),
        organiser_password=PASSWORD,
        opens_at=now - timedelta(days=1),
        closes_at=now + timedelta(days=1),
        max_per_day=-(-args.uploads // args.clients) + 1,
        max_total=100,
    )
    members = factory.member_teams_create(task=task, count=args.teams, password=PASSWORD)

    others = members[args.clients :]
    files, matrices = [], []
    for n in range(len(others)):
        predicted = factory.noisy_codes(gold, n_labels=len(LABELS), error_rate=rng.uniform(0.1, 0.8), rng=rng)
        files.append(StoredFile.of(name=f"team-{n}.csv", content=factory.labels_csv(ids, LABELS, predicted)))
        matrices.append(hard_confusion(predicted, gold, len(LABELS)))
    StoredFile.objects.bulk_create(files, batch_size=50)
    factory.scored_submissions_create(
        task=task,
        runs=[
            factory.ScoredRun(
                team=member.team, file=stored, matrix=matrix, at=now - timedelta(hours=1), submitted_by=member.user
            )
            for member, stored, matrix in zip(others, files, matrices, strict=True)
        ],
        batch_size=100,
    )
    return Setup(
        task_id=task.pk,
        ids=ids,
        gold=gold,
        rush_usernames=[member.user.username for member in members[: args.clients]],
        rush_team_ids=[member.team.pk for member in members[: args.clients]],
    )


# --- the rush -----------------------------------------------------------------------------------


@dataclass
class Upload:
    latency_ms: float
    submission_id: int | None
    refusal: str = ""


READ_PAGES = ("leaderboard", "disagreements")


def warm_up(setup: Setup, port: int) -> dict[str, float]:
    """Before the rush, as on a live board: the derived results of the scores so far, then each page
    read once on the empty cache (its latency returned)."""
    for phase in Phase.objects.filter(task_id=setup.task_id):
        derived.bring_up_to_date(phase=phase)
    reader = Browser(port, accepts_gzip=True)
    return {page: reader.get(f"/tasks/{SLUG}/{page}/").latency_ms for page in READ_PAGES}


ACCESS_LINE = re.compile(r'"GET /tasks/[^/]+/(leaderboard|disagreements)/ HTTP/[0-9.]+" 200 \d+ (\d+)ms')


def access_log_lines() -> int:
    path = RUN_DIR / "access.log"
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def server_times_ms(first_line: int, last_line: int) -> dict[str, list[float]]:
    """The readers' requests as gunicorn timed them (from its access log, between two line
    counts): the time in the server, without the wait for a connection to be accepted or for
    the client's own threads."""
    found: dict[str, list[float]] = {page: [] for page in READ_PAGES}
    lines = (RUN_DIR / "access.log").read_text(errors="replace").splitlines()[first_line:last_line]
    for line in lines:
        match = ACCESS_LINE.search(line)
        if match:
            found[match.group(1)].append(float(match.group(2)))
    return found


@dataclass
class Rush:
    uploads: list[Upload] = field(default_factory=list)
    reads: dict[str, list[float]] = field(default_factory=lambda: {"leaderboard": [], "disagreements": []})
    read_errors: list[int] = field(default_factory=list)
    started_at: float = 0.0
    last_answer_at: float = 0.0
    server_ms: dict[str, list[float]] = field(default_factory=dict)
    """Page → the readers' requests during the rush as the server timed them."""
    cpu_before: dict[str, float] = field(default_factory=dict)


def upload_one(browser: Browser, body: tuple[bytes, str]) -> Upload:
    answer = browser.request("POST", f"/tasks/{SLUG}/submit/", body=body[0], content_type=body[1])
    accepted = SUBMISSION_PATH.search(answer.location) if answer.status == 302 else None
    if accepted:
        return Upload(answer.latency_ms, int(accepted.group(1)))
    why = f"HTTP {answer.status}"
    if answer.status == 302:  # back to the task page, whose message says why
        found = REFUSAL.search(browser.get(answer.location).body)
        why = found.group(1).decode().strip() if found else "refused, no message"
    return Upload(answer.latency_ms, None, why)


def read_pages(n: int, port: int, go: Any, done: Any, out: Any) -> None:
    """One anonymous reader, in a process of its own as a browser is (so that its times are not
    its waits for this process's interpreter lock, busy with 50 uploading threads): the
    leaderboard and the disagreements in turn, over one kept connection, until ``done``; then
    (page, status, latency) of every read on ``out``."""
    anonymous = Browser(port, accepts_gzip=True, keep_alive=True)
    reads = []
    go.wait()
    while not done.is_set():
        page = READ_PAGES[n % 2]
        n += 1
        answer = anonymous.get(f"/tasks/{SLUG}/{page}/")
        reads.append((page, answer.status, answer.latency_ms))
    out.put(reads)


def run_rush(args: argparse.Namespace, setup: Setup, port: int, rng: np.random.Generator, cpu: Any) -> Rush:
    """The rush; ``cpu()``: each part's CPU seconds so far, taken as it starts."""
    browsers = [Browser(port) for _ in range(args.clients)]
    with ThreadPoolExecutor(max_workers=args.clients) as pool:
        tokens = list(pool.map(lambda b, u: log_in(b, u, task_slug=SLUG), browsers, setup.rush_usernames))
    bodies: list[list[tuple[bytes, str]]] = [[] for _ in browsers]
    for n in range(args.uploads):
        client = n % args.clients
        predicted = factory.noisy_codes(setup.gold, n_labels=len(LABELS), error_rate=rng.uniform(0.1, 0.7), rng=rng)
        bodies[client].append(
            multipart(
                {"csrfmiddlewaretoken": tokens[client], "description": f"rush upload {n}"},
                file_field="file",
                file_name=f"run-{n}.csv",
                content=factory.labels_csv(setup.ids, LABELS, predicted),
            )
        )

    rush = Rush()
    go = threading.Event()
    first_line = access_log_lines()

    def uploader(client: int) -> None:
        go.wait()
        for body in bodies[client]:
            rush.uploads.append(upload_one(browsers[client], body))
            rush.last_answer_at = max(rush.last_answer_at, time.perf_counter())

    Phase.objects.filter(task_id=setup.task_id).update(closes_at=timezone.now() + timedelta(seconds=args.deadline_s))
    forking = multiprocessing.get_context("fork")
    reads_go, reads_done, reads_out = forking.Event(), forking.Event(), forking.Queue()
    readers = [
        forking.Process(target=read_pages, args=(n, port, reads_go, reads_done, reads_out), daemon=True)
        for n in range(args.readers)
    ]
    for process in readers:
        process.start()
    with ThreadPoolExecutor(max_workers=args.clients) as pool:
        futures = [pool.submit(uploader, client) for client in range(args.clients)]
        rush.cpu_before = cpu()
        rush.started_at = time.perf_counter()
        reads_go.set()
        go.set()
        for future in futures:
            future.result()
    reads_done.set()
    for _ in readers:
        for page, status, latency_ms in reads_out.get(timeout=REQUEST_TIMEOUT_S):
            (rush.reads[page] if status == 200 else rush.read_errors).append(latency_ms if status == 200 else status)
    for process in readers:
        process.join(timeout=REQUEST_TIMEOUT_S)
    time.sleep(0.5)  # the access log's last lines
    rush.server_ms = server_times_ms(first_line, access_log_lines())
    return rush


# --- where the CPU went -------------------------------------------------------------------------

TICKS_S = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> float:
    """A process's CPU seconds, with those of its children that have ended (a worker's intervals
    computations, PostgreSQL's backends, the readers)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return sum(int(value) for value in fields[11:15]) / TICKS_S  # utime, stime, cutime, cstime


def _named(*names: str) -> list[int]:
    """The processes running one of these programs (the shared PostgreSQL and Redis servers)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() in names:
                found.append(int(entry.name))
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def cpu_by_group(web: ManagedProcess, workers: list[ManagedProcess]) -> dict[str, float]:
    """CPU seconds so far of each part of the set-up, from ``/proc``: the web processes, the RQ
    workers with their children, PostgreSQL's and Redis's servers (every one of them on this
    machine), and this process with its readers and uploading clients."""
    own = os.times()
    return {
        "gunicorn (uploads and pages)": sum(_cpu_s(pid) for pid in web.pids()),
        "RQ workers (scoring, derived results)": sum(_cpu_s(pid) for w in workers for pid in w.pids()),
        "PostgreSQL": sum(_cpu_s(pid) for pid in _named("postgres")),
        "Redis": sum(_cpu_s(pid) for pid in _named("redis-server")),
        "clients (uploaders and readers)": own.user + own.system + own.children_user + own.children_system,
    }


def cpu_table(before: dict[str, float], after: dict[str, float], *, uploads: int, seconds: float) -> None:
    """The CPU each part spent from the rush's start until everything was scored, in all and per
    upload, and its share of the machine's cores over that time."""
    print(f"\nCPU from the rush's start to the last score ({seconds:.1f} s, {os.cpu_count()} cores)\n")
    print("| part | CPU | per upload | share of the cores |\n| --- | ---: | ---: | ---: |")
    spent = {part: after[part] - before[part] for part in after}
    for part, cpu in [*spent.items(), ("all", sum(spent.values()))]:
        share = cpu / (seconds * (os.cpu_count() or 1))
        print(f"| {part} | {cpu:.1f} s | {cpu / uploads * 1000:,.0f} ms | {share:.0%} |")


def web_part(stack: str) -> str:
    """A web process's sample → its part: the upload, a page read (by its view), a page computed
    after a response in the process's thread for it, or gunicorn itself."""
    if "handle_request (gunicorn" not in stack:
        if "_compute_later (leaderboard/results_cache" in stack:
            return "web: pages recomputed after a new score, after their response"
        return "web: gunicorn itself (accepting, polling, heartbeat)"
    views = [name for name in own_frames(stack, "leaderboard/views/") if name != "wrapper"]  # not a decorator's
    if not views:
        return "web: a request outside its view (HTTP, middleware, session)"
    if views[0] == "submission_create":
        return "web: upload request (read, check, store, enqueue)"
    recomputed = ", recomputed in its request" if "_compute (leaderboard/results_cache" in stack else ""
    return f"web: read of {views[0]}{recomputed}"


def worker_part(stack: str) -> str:
    """An RQ worker's sample (or its intervals child's) → its part."""
    if "submission_score (leaderboard/services/scoring" in stack:
        return "workers: scoring job"
    if "(leaderboard/stability" in stack:
        return "workers: derived result (intervals)"
    if "(leaderboard/analysis" in stack or "compute_derived (leaderboard/derived" in stack:
        return "workers: derived result (analysis)"
    return "workers: RQ itself (dequeue, job bookkeeping, recovery sweep)"


def spy_table(spied: dict[str, list[Path]], spent: dict[str, float], *, uploads: int) -> None:
    """Each part's CPU milliseconds an upload: its share of its group's samples times the group's
    CPU (``spent``, seconds)."""
    print(f"\nWhere the rush's CPU went (py-spy samples × each group's CPU), {uploads} uploads\n")
    print("| part | samples | CPU an upload |\n| --- | ---: | ---: |")
    for group, classify in (
        ("gunicorn (uploads and pages)", web_part),
        ("RQ workers (scoring, derived results)", worker_part),
    ):
        counted = shares(spied[group], classify)
        total = sum(counted.values()) or 1
        for part, n in counted.most_common():
            print(f"| {part} | {n:,} | {spent[group] * n / total / uploads * 1000:,.1f} ms |")
    for group in ("PostgreSQL", "Redis", "clients (uploaders and readers)"):
        print(f"| {group} (not sampled) | | {spent[group] / uploads * 1000:,.1f} ms |")


# --- results ----------------------------------------------------------------------------------


def percentiles_ms(samples: list[float]) -> str:
    if not samples:
        return "n/a"
    p50, p95 = np.percentile(samples, [50, 95])
    return f"{p50:,.0f} ms / {p95:,.0f} ms (n={len(samples)})"


def at_rest_ms(port: int, page: str, repeat: int = 20) -> list[float]:
    browser = Browser(port, accepts_gzip=True, keep_alive=True)
    return [browser.get(f"/tasks/{SLUG}/{page}/").latency_ms for _ in range(repeat)]


def report(
    args: argparse.Namespace,
    setup: Setup,
    rush: Rush,
    *,
    port: int,
    web_workers: int,
    all_scored_at: float,
    cold: dict[str, float],
):
    task = Task.objects.get(pk=setup.task_id)
    rush_rows = Submission.objects.filter(phase__task=task, team_id__in=setup.rush_team_ids)
    accepted = {u.submission_id for u in rush.uploads if u.submission_id is not None}
    stored = set(rush_rows.values_list("pk", flat=True))
    scored = set(rush_rows.filter(status=Submission.Status.SCORED).values_list("pk", flat=True))
    times = rush_rows.aggregate(last_upload=Max("created_at"), last_score=Max("scored_at"))
    board = leaderboard(phase=task.current_phase())
    refusals: dict[str, int] = {}
    for upload in rush.uploads:
        if upload.submission_id is None:
            refusals[upload.refusal] = refusals.get(upload.refusal, 0) + 1
    last_to_score = (
        f"{(times['last_score'] - times['last_upload']).total_seconds():.1f} s"
        if times["last_score"] and times["last_upload"]
        else "n/a"
    )
    rows = [
        (
            "uploads sent / accepted / refused",
            f"{len(rush.uploads)} / {len(accepted)} / {len(rush.uploads) - len(accepted)}",
        ),
        ("refusals", ", ".join(f"{n}× {why}" for why, n in refusals.items()) or "none"),
        ("scored (of accepted)", f"{len(scored & accepted)}"),
        ("**lost** (accepted, not scored or not stored)", f"**{len(accepted - scored)}**"),
        ("stored without an answer to the client", f"{len(stored - accepted)}"),
        (
            "**duplicate scores** (score_count > 1)",
            f"**{Submission.objects.filter(phase__task=task, score_count__gt=1).count()}**",
        ),
        ("failed scoring", f"{rush_rows.filter(status=Submission.Status.FAILED).count()}"),
        ("upload latency p50 / p95", percentiles_ms([u.latency_ms for u in rush.uploads])),
        (
            f"leaderboard latency p50 / p95, during the rush ({len(board.entries)} teams)",
            percentiles_ms(rush.reads["leaderboard"]),
        ),
        ("leaderboard latency p50 / p95, at rest (one client)", percentiles_ms(at_rest_ms(port, "leaderboard"))),
        ("disagreements latency p50 / p95, during the rush", percentiles_ms(rush.reads["disagreements"])),
        *(
            (f"{page} during the rush, time in the server (gunicorn's access log)", percentiles_ms(found))
            for page, found in rush.server_ms.items()
        ),
        *((f"{page}: first read, cold, before the rush", f"{ms:,.0f} ms") for page, ms in cold.items()),
        ("reader errors (non-200)", f"{len(rush.read_errors)}"),
        ("rush: first upload sent → last answered", f"{rush.last_answer_at - rush.started_at:.1f} s"),
        ("last upload → last score (database clocks)", last_to_score),
        ("last upload answered → all scored (seen by polling)", f"{all_scored_at - rush.last_answer_at:.1f} s"),
    ]
    web_threads = runpy.run_path(str(BASE_DIR / "config" / "gunicorn.py"))["threads"]  # as gunicorn read it
    print(
        f"\n{os.cpu_count()} cores · gunicorn {web_workers} workers × {web_threads} threads"
        f" · {args.rq_workers} RQ workers · "
        f"{args.clients} uploading clients + {args.readers} readers · {len(setup.ids):,} items · "
        f"{args.teams} teams · deadline {args.deadline_s:g} s after the start · "
        f"{'cold cache' if args.cold else 'pages read before the rush'}\n"
    )
    print("| measure | value |\n| --- | --- |")
    for measure, value in rows:
        print(f"| {measure} | {value} |")


def profile_board(setup: Setup) -> None:
    """Where the leaderboard page's time goes: the selector, then the whole view with its template,
    every piece computed anew (the task's results changed before each read: no cached entry)."""
    task = Task.objects.get(pk=setup.task_id)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(User.objects.get(username=setup.rush_usernames[0]))  # a member's page is their own

    def fresh(path: str) -> Any:
        results_changed(setup.task_id)
        return client.get(path)

    for what, call in (
        ("the board selector", lambda: leaderboard(phase=task.current_phase())),
        ("the leaderboard view (selector + template)", lambda: fresh(f"/tasks/{SLUG}/leaderboard/")),
    ):
        call()  # warm
        started = time.perf_counter()
        for _ in range(5):
            call()
        mean_ms = (time.perf_counter() - started) / 5 * 1000
        profiler = cProfile.Profile()
        profiler.runcall(call)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(18)
        print(f"\n### {what}: {mean_ms:,.0f} ms per call, in process, at rest\n\n```\n{out.getvalue().strip()}\n```")


def _cpu_ms(call: Any) -> tuple[float, Any]:
    """``call()``'s CPU time in this process (milliseconds), and its result."""
    started = time.process_time()
    result = call()
    return (time.process_time() - started) * 1000, result


def _profile(what: str, call: Any, *, lines: int = 25) -> Any:
    """``call()`` under cProfile, its own time's largest functions printed (cProfile slows
    Python-heavy code several times over: read it for what, not for how long)."""
    profiler = cProfile.Profile(time.process_time)
    result = profiler.runcall(call)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(lines)
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(r"/(leaderboard|scoring)/", lines)
    body = out.getvalue().strip().split("\n", 4)[-1]
    print(f"\n### {what}, by its functions' own time\n\n```\n{body}\n```")
    return result


def profile_upload(setup: Setup, rng: np.random.Generator, repeat: int = 7) -> None:
    """Everything one upload causes, part by part, in this process once the workers are stopped
    (the medians of ``repeat`` uploads, CPU time): the upload request (with the queue on Redis, it
    only enqueues), the scoring job, each page recomputed for an anonymous reader after the new
    score (once the page is older than its window, in the reader's thread), and each derived
    result it asks for; then where the request's, the job's and the page's time goes."""
    member = Client(HTTP_HOST="127.0.0.1")
    member.force_login(User.objects.get(username=setup.rush_usernames[0]))
    reader = Client(HTTP_HOST="127.0.0.1", HTTP_ACCEPT_ENCODING="gzip")
    phase = Task.objects.get(pk=setup.task_id).current_phase()
    Phase.objects.filter(pk=phase.pk).update(max_per_day=100)
    spent: dict[str, list[float]] = {}

    def upload() -> Any:
        predicted = factory.noisy_codes(setup.gold, n_labels=len(LABELS), error_rate=0.3, rng=rng)
        file = SimpleUploadedFile("profiled.csv", factory.labels_csv(setup.ids, LABELS, predicted))
        return lambda: member.post(f"/tasks/{SLUG}/submit/", {"file": file, "description": "profiled"})

    settings.RESULTS_AFTER_RESPONSE_IN = "request"  # a page's recomputation in the reader's thread, on its CPU
    member.get(f"/tasks/{SLUG}/")  # the middleware's first set-up is no upload's
    for n in range(repeat + 1):
        cpu, answer = _cpu_ms(upload())
        run = int(SUBMISSION_PATH.search(answer["Location"]).group(1))
        found = {"the upload request (read, check, store, enqueue)": cpu}
        found["the scoring job"] = _cpu_ms(lambda run=run: submission_score(submission_id=run))[0]
        time.sleep(2 * settings.RESULTS_SCORES_FRESH_S)  # each page older than its window: recomputed for its reader
        for page in READ_PAGES:
            found[f"{page} page, recomputed after a new score"] = _cpu_ms(
                lambda page=page: reader.get(f"/tasks/{SLUG}/{page}/")
            )[0]
        for name in derived.KINDS:
            found[f"derived result: {name}"] = _cpu_ms(lambda name=name: derived.compute(name, phase.pk))[0]
        if n:  # the first is a warm-up
            for part, ms in found.items():
                spent.setdefault(part, []).append(ms)
    print(f"\n### One upload's parts, in process, CPU ms (median of {repeat}; {len(setup.ids):,} items)\n")
    print("| part | CPU |\n| --- | ---: |")
    for part, samples in spent.items():
        print(f"| {part} | {statistics.median(samples):,.0f} ms |")
    answer = _profile("the upload request", upload())
    submission_id = int(SUBMISSION_PATH.search(answer["Location"]).group(1))
    _profile("the scoring job", lambda: submission_score(submission_id=submission_id))
    submission_score(submission_id=submission_id)
    time.sleep(2 * settings.RESULTS_SCORES_FRESH_S)
    _profile("the leaderboard page, recomputed after a new score", lambda: reader.get(f"/tasks/{SLUG}/leaderboard/"))


# --- the run ------------------------------------------------------------------------------------


def main(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(2017)
    processes: list[ManagedProcess] = []
    recreate_database(args.pg_admin_url, BENCH_DATABASE)
    redis_client = redis.Redis.from_url(args.redis_url)
    redis_client.flushdb()
    failed = True
    try:
        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        started = time.perf_counter()
        setup = build(args, rng)
        print(
            f"set-up: {args.teams} teams, task and board built in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )

        full_env = {**os.environ, **ENV}
        workers = [start_worker(name=f"rush-{n}", env=full_env, log_dir=RUN_DIR) for n in range(args.rq_workers)]
        processes.extend(workers)
        web = start_process(
            name="gunicorn",
            args=[sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py"],
            env=full_env,
            log_dir=RUN_DIR,
        )
        processes.append(web)
        wait_listening(workers, redis_client=redis_client, timeout_s=60)
        wait_until(lambda: answers(PORT), timeout_s=60, what="gunicorn to answer", interval_s=0.2)
        web_workers = len(web.pids()) - 1

        cold = {} if args.cold else warm_up(setup, PORT)
        spies: dict[str, Spy] = {}

        def rush_starts() -> dict[str, float]:
            if args.spy:
                spies["gunicorn (uploads and pages)"] = Spy([web.popen.pid], SPY_DIR)
                spies["RQ workers (scoring, derived results)"] = Spy([w.popen.pid for w in workers], SPY_DIR)
            return cpu_by_group(web, workers)

        rush = run_rush(args, setup, PORT, rng, cpu=rush_starts)
        unfinished = Submission.objects.filter(phase__task_id=setup.task_id).unfinished()
        wait_until(lambda: not unfinished.exists(), timeout_s=args.scoring_timeout_s, what="scoring", interval_s=0.1)
        all_scored_at = time.perf_counter()
        cpu_after = cpu_by_group(web, workers)
        spied = {group: spy.stop() for group, spy in spies.items()}
        report(args, setup, rush, port=PORT, web_workers=web_workers, all_scored_at=all_scored_at, cold=cold)
        cpu_table(rush.cpu_before, cpu_after, uploads=len(rush.uploads), seconds=all_scored_at - rush.started_at)
        if spied:
            spent = {part: cpu_after[part] - rush.cpu_before[part] for part in cpu_after}
            spy_table(spied, spent, uploads=len(rush.uploads))
            print(f"\npy-spy's samples: {SPY_DIR}")
        if args.profile:
            profile_board(setup)
            for worker in workers:
                worker.kill()
            profile_upload(setup, rng)
        failed = False
    finally:
        for process in processes:
            process.kill()
        connections.close_all()
        redis_client.flushdb()
        redis_client.close()
        if not args.keep_db:
            database_admin(args.pg_admin_url, f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")
        if failed:
            print(f"logs kept in {RUN_DIR}", file=sys.stderr)
        else:
            shutil.rmtree(RUN_DIR, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
