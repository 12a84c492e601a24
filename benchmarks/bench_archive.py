"""The organisers' archive: what every run in one download, and the import of a large bundle, cost.

**Every run in one download.** A task of three classes with a gold file of 12,284 items (the
size of SemEval-2017 Task 4A's test set, the demo's), ``--teams`` teams with ``--runs-per-team``
runs each (default 100 × 10 = 1,000 runs), every run a prediction file of 12,284 lines stored
and scored as the scoring task leaves it (``tools.factory``; the scores are those of the file's
own confusion matrix). The site runs under gunicorn with the production settings, one gthread
worker (a sync worker is stopped by its timeout during a long download), on a SQLite file of
its own. The organiser downloads ``GET /api/tasks/<task>/submissions.zip`` with a token, reading
the stream 64 kB at a time: time to the first byte, total time, bytes; meanwhile the worker's
resident memory is sampled from /proc every 10 ms, and compared with its memory at rest (after
a first request has loaded everything). The archive is then opened and checked: every run's
file and the index's lines. Then the same task is exported as a bundle with its runs and
imported again, every run validated and scored anew, in this process (the immediate backend:
what ``manage.py import_task`` does on the embedded set-up).

**The import of a bundle with a 2,000,000-line gold file**, in this process (as the import
page's request would run it): a task bundle (``task.yaml``) and a CodaLab bundle (competition.yaml
v1.5, its reference data one label per line in a zip inside the bundle, converted), each
checked and previewed (``import_upload``), then created (``import_confirm``); time and the
process's peak resident memory above what it held before, sampled every 10 ms.

Figures are printed as Markdown tables; nothing is asserted::

    python benchmarks/bench_archive.py                      # both parts
    python benchmarks/bench_archive.py --part archive --teams 100 --runs-per-team 10
    python benchmarks/bench_archive.py --part import --gold-lines 2000000
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import http.client
import io
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import django
import numpy as np

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from tools.processes import start_process, wait_until  # noqa: E402 (the repository goes on the path first)

LABELS = ("negative", "neutral", "positive")
GOLD_COUNTS = (3972, 5937, 2375)
CHUNK = 64 * 1024


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["archive", "import", "both"], default="both")
    parser.add_argument("--teams", type=int, default=100)
    parser.add_argument("--runs-per-team", type=int, default=10)
    parser.add_argument("--gold-lines", type=int, default=2_000_000)
    return parser.parse_args(argv)


ARGS = parse_args(sys.argv[1:])
SCRATCH = Path(tempfile.mkdtemp(prefix="archivebench-"))
DATABASE_URL = f"sqlite:///{SCRATCH / 'archivebench.sqlite3'}"
os.environ.update(
    DATABASE_URL=DATABASE_URL,
    DJANGO_SETTINGS_MODULE="config.settings.test",
    LEADERBOARD_VAR_DIR=str(SCRATCH / "var"),
)
(SCRATCH / "var").mkdir()
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402 (Django is set up first)
from django.core.management import call_command  # noqa: E402
from django.utils import timezone  # noqa: E402

from leaderboard.bundles.export import task_bundle  # noqa: E402
from leaderboard.bundles.pending import import_options  # noqa: E402
from leaderboard.bundles.plan import ImportOptions  # noqa: E402
from leaderboard.models import StoredFile, Task  # noqa: E402
from leaderboard.services.imports import import_choose, import_confirm, import_upload  # noqa: E402
from leaderboard.services.tokens import token_create  # noqa: E402
from tools import factory  # noqa: E402


def rss_bytes(pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class PeakMemory:
    """The highest resident memory of a process while the block runs, sampled every 10 ms."""

    def __init__(self, pid: int | str = "self") -> None:
        self.pid, self.peak, self._running = pid, 0, False

    def _sample(self) -> None:
        while self._running:
            self.peak = max(self.peak, rss_bytes(self.pid))
            time.sleep(0.01)

    def __enter__(self) -> PeakMemory:
        self.before = rss_bytes(self.pid)
        self.peak, self._running = self.before, True
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._running = False
        self._thread.join()
        self.peak = max(self.peak, rss_bytes(self.pid))


def mib(size: float) -> str:
    return f"{size / 2**20:,.1f} MiB"


# --- every run in one download ------------------------------------------------------------------


def build_task(teams: int, runs_per_team: int) -> tuple[Task, str, int]:
    """The task, the organiser's API token, and the bytes of the runs' files."""
    rng = np.random.default_rng(2017)
    gold = np.repeat(np.arange(len(LABELS)), GOLD_COUNTS)
    rng.shuffle(gold)
    ids = factory.item_ids(len(gold))
    now = timezone.now()
    task = factory.task_create(
        slug="archive-bench",
        title="Archive benchmark",
        description="",
        labels=LABELS,
        gold_content=factory.labels_csv(ids, LABELS, gold),
        organiser_password="archive-bench-password",
        opens_at=now - dt.timedelta(days=30),
        closes_at=now - dt.timedelta(days=1),
        max_per_day=1000,
        max_total=1000,
    )
    team_rows = factory.teams_create(task=task, count=teams)
    stored_bytes = 0
    for n, team in enumerate(team_rows):
        files, matrices = [], []
        for run in range(runs_per_team):
            predicted = factory.noisy_codes(gold, n_labels=len(LABELS), error_rate=rng.uniform(0.2, 0.6), rng=rng)
            content = factory.labels_csv(ids, LABELS, predicted)
            stored_bytes += len(content)
            files.append(StoredFile.of(name=f"team-{n:03d}-run-{run + 1}.csv", content=content))
            matrices.append(np.bincount(predicted * len(LABELS) + gold, minlength=9).reshape(3, 3))
        StoredFile.objects.bulk_create(files)
        runs = [
            factory.ScoredRun(team=team, file=stored, matrix=matrix, at=now - dt.timedelta(days=20, minutes=-run))
            for run, (stored, matrix) in enumerate(zip(files, matrices, strict=True))
        ]
        factory.scored_submissions_create(task=task, runs=runs, batch_size=runs_per_team, seed=n)
    organiser = get_user_model().objects.get(username="organiser")
    secret = token_create(user=organiser, name="bench")[1]
    return task, secret, stored_bytes


def get(port: int, path: str, token: str, sink=None) -> tuple[int, float, float, int]:
    """Status, seconds to the first byte, seconds in all, bytes read (written to ``sink``)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    started = time.perf_counter()
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}", "Host": "127.0.0.1"})
    response = connection.getresponse()
    first = response.read(1)
    first_byte = time.perf_counter() - started
    size = len(first)
    if sink is not None:
        sink.write(first)
    while chunk := response.read(CHUNK):
        size += len(chunk)
        if sink is not None:
            sink.write(chunk)
    total = time.perf_counter() - started
    connection.close()
    return response.status, first_byte, total, size


def bench_archive(teams: int, runs_per_team: int) -> None:
    print(f"Building {teams} teams × {runs_per_team} runs of {sum(GOLD_COUNTS):,} lines…", flush=True)
    started = time.perf_counter()
    task, token, stored_bytes = build_task(teams, runs_per_team)
    n_runs = teams * runs_per_team
    print(f"  built in {time.perf_counter() - started:.0f} s: {mib(stored_bytes)} of run files", flush=True)
    port = 18000 + secrets.randbelow(1000)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.prod",
        "SECRET_KEY": secrets.token_urlsafe(60),
        "ALLOWED_HOSTS": "127.0.0.1",
        "INSECURE_HTTP_FOR_LOCAL_BENCHMARK": "true",
        "SECURE_SSL_REDIRECT": "false",
        "LOG_LEVEL": "WARNING",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "1",
        "GUNICORN_THREADS": "4",
        "GUNICORN_TIMEOUT": "120",
        "GUNICORN_ACCESS_LOG": str(SCRATCH / "access.log"),
        "PYTHONUNBUFFERED": "1",
    }
    server = start_process(
        name="gunicorn", args=[sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py"], env=env, log_dir=SCRATCH
    )
    try:
        wait_until(lambda: len(server.pids()) >= 2, timeout_s=60, what="gunicorn's worker", interval_s=0.2)
        worker = max(server.pids())  # the master starts first
        path = f"/api/tasks/{task.slug}/submissions.zip?phase=evaluation"
        wait_until(lambda: get(port, "/api/tasks", token)[0] == 200, timeout_s=60, what="gunicorn to answer")
        get(port, f"/api/tasks/{task.slug}/leaderboard?phase=evaluation", token)  # the board's code loaded
        time.sleep(0.5)
        at_rest = rss_bytes(worker)
        archive_path = SCRATCH / "runs.zip"
        with archive_path.open("wb") as sink, PeakMemory(worker) as peak:
            status, first_byte, total, size = get(port, path, token, sink)
        high_water = next(
            int(line.split()[1]) * 1024
            for line in Path(f"/proc/{worker}/status").read_text().splitlines()
            if line.startswith("VmHWM:")
        )
    finally:
        log = server.log_tail()
        server.kill()
    if status != 200:
        raise SystemExit(f"the download answered {status}:\n{log}")
    with zipfile.ZipFile(archive_path) as archive:
        names = archive.namelist()
        index = archive.read("runs.csv").decode().splitlines()
        assert archive.testzip() is None
    assert len(names) == n_runs + 2 and len(index) == n_runs + 1, (len(names), len(index))
    print(
        f"\n### Every run in one download: {n_runs:,} runs of {sum(GOLD_COUNTS):,} lines "
        f"({teams} teams × {runs_per_team})\n"
    )
    print("| measure | value |\n| --- | --- |")
    rows = [
        ("run files stored", mib(stored_bytes)),
        ("archive downloaded", f"{mib(size)} ({size:,} bytes; {len(names):,} files, all checked)"),
        ("time to the first byte", f"{first_byte * 1000:,.0f} ms"),
        ("time in all", f"{total:,.1f} s ({stored_bytes / 2**20 / total:,.0f} MiB of runs a second)"),
        ("worker's memory at rest", mib(at_rest)),
        ("worker's peak while streaming (sampled every 10 ms)", f"{mib(peak.peak)} (+{mib(peak.peak - at_rest)})"),
        ("worker's high-water mark since it started (VmHWM)", f"{mib(high_water)} (+{mib(high_water - at_rest)})"),
    ]
    for name, value in rows:
        print(f"| {name} | {value} |")
    bench_round_trip(task, n_runs)


def bench_round_trip(task: Task, n_runs: int) -> None:
    """The same task as a bundle with its runs, exported then imported (every run validated and
    scored again), in this process."""
    organiser = get_user_model().objects.get(username="organiser")
    bundle_path = SCRATCH / "bundle.zip"
    with bundle_path.open("wb") as sink, PeakMemory() as export_memory:
        started = time.perf_counter()
        for piece in task_bundle(task, with_runs=True, user=organiser):
            sink.write(piece)
        exported = time.perf_counter() - started
    content = bundle_path.read_bytes()
    with PeakMemory() as check:
        started = time.perf_counter()
        pending = import_upload(user=organiser, name="bundle.zip", content=content)
        checked = time.perf_counter() - started
    import_choose(pending=pending, options=ImportOptions(slug="archive-bench-again"), golds={})
    with PeakMemory() as create:
        started = time.perf_counter()
        copy = import_confirm(pending=pending, options=import_options(pending))  # scored as it commits
        created = time.perf_counter() - started
    scored = copy.submissions.filter(status="scored").count()
    assert scored == n_runs, scored
    print(f"\n### The same task as a bundle with its {n_runs:,} runs, exported and imported (in process)\n")
    print("| step | time | peak memory above the step's start |\n| --- | --- | --- |")
    exported_memory = mib(export_memory.peak - export_memory.before)
    print(f"| export (`export_task --runs`), {mib(len(content))} | {exported:,.1f} s | +{exported_memory} |")
    print(f"| check and preview (every file and checksum) | {checked:,.1f} s | +{mib(check.peak - check.before)} |")
    print(
        f"| create, every run validated, then scored as the transaction commits | {created:,.1f} s "
        f"| +{mib(create.peak - create.before)} |"
    )


# --- the import of a large bundle ---------------------------------------------------------------


def gold_lines(count: int) -> bytes:
    rng = np.random.default_rng(1)
    codes = rng.integers(0, len(LABELS), size=count)
    return factory.labels_csv(factory.item_ids(count), LABELS, codes)


def task_bundle_of(gold: bytes) -> bytes:
    document = f"""format: shared-task-leaderboard/task
version: 1
task:
  title: Two million items
  labels: [{", ".join(LABELS)}]
  primary_metric: macro_f1
phases:
- slug: evaluation
  name: Evaluation
  opens_at: 2030-01-01T00:00:00Z
  closes_at: 2030-02-01T00:00:00Z
  max_per_day: 5
  max_total: 100
  counting: latest
  visibility: public
  feedback: full
  gold: {{file: phases/evaluation/gold/gold.csv, sha256: {hashlib.sha256(gold).hexdigest()}}}
"""
    return zip_of({"task.yaml": document.encode(), "phases/evaluation/gold/gold.csv": gold})


def codalab_bundle_of(gold: bytes) -> bytes:
    one_per_line = b"\n".join(line.split(b",", 1)[1] for line in gold.splitlines()[1:]) + b"\n"
    document = b"""title: Two million items
description: A CodaLab competition with a large reference file.
has_registration: false
html: {overview: overview.html, terms: terms.html}
phases:
  1: {phasenumber: 1, label: Final, start_date: 2030-01-01, reference_data: reference.zip, max_submissions: 5}
"""
    return zip_of(
        {
            "competition.yaml": document,
            "overview.html": b"<p>Large.</p>",
            "terms.html": b"<p>Be fair.</p>",
            "reference.zip": zip_of({"truth.txt": one_per_line}),
        }
    )


def zip_of(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


def bench_import(lines: int) -> None:
    gold = gold_lines(lines)
    organiser = get_user_model().objects.get_or_create(username="importer")[0]
    rows = []
    for kind, content in (("task bundle (task.yaml)", task_bundle_of(gold)), ("CodaLab v1.5", codalab_bundle_of(gold))):
        with PeakMemory() as check:
            started = time.perf_counter()
            pending = import_upload(user=organiser, name="bundle.zip", content=content)
            checked = time.perf_counter() - started
        import_choose(pending=pending, options=ImportOptions(slug=f"big-{len(rows)}"), golds={})
        with PeakMemory() as create:
            started = time.perf_counter()
            task = import_confirm(pending=pending, options=import_options(pending))
            created = time.perf_counter() - started
        assert task.current_phase().baselines.count() == 3
        rows.append((kind, len(content), checked, check, created, create))
    print(f"\n### The import of a bundle with a {lines:,}-line gold file ({mib(len(gold))} of CSV)\n")
    print("| bundle | zip | check and preview | its peak memory | create | its peak memory |")
    print("| --- | --- | --- | --- | --- | --- |")
    for kind, size, checked, check, created, create in rows:
        print(
            f"| {kind} | {mib(size)} | {checked:,.1f} s | +{mib(check.peak - check.before)} | {created:,.1f} s "
            f"| +{mib(create.peak - create.before)} |"
        )


def main() -> None:
    call_command("migrate", verbosity=0)
    print(f"{os.cpu_count()} cores · Python {sys.version.split()[0]} · SQLite file in {SCRATCH}")
    try:
        if ARGS.part in ("archive", "both"):
            bench_archive(ARGS.teams, ARGS.runs_per_team)
        if ARGS.part in ("import", "both"):
            bench_import(ARGS.gold_lines)
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)


if __name__ == "__main__":
    main()
