"""The demo as a whole: every link a visitor can follow from the home page, followed.

The demo (``manage.py load_demo``: SemEval-2017 Task 4, divided into two subtasks, and the
multi-label emotion task of SemEval-2018 Task 1 E-c's form) is served by
the embedded set-up's own server (what ``make demo`` runs) on the loopback. Three people walk
it: an anonymous visitor, a team's member (``team-a``) and the organiser, each logged in
through the log-in form. From the home page, each follows every link (``<a href>``,
``<iframe src>``) to a page under ``/tasks/`` or ``/api/``, and every address under them that a
JSON answer names, with GET only, until no new address is left; a query string that differs
only in the values of the parameters it sets (a board sorted by another column, another page)
is followed once per path and set of parameters, which keeps the walk to a few hundred
addresses a person.

What this proves: no address a person is shown answers a server error or 404; every zip opens
and each of its members reads back whole (``testzip``); every CSV parses, each line with the
header's number of fields; every JSON answer parses; each walk reaches the pages a person in
that role needs (the boards, downloads, analyses and what-ifs of both subtasks and of the
multi-label task; a team's runs; the organisers' archive and bundle of every phase); and the
organisers' archive of every phase holds every run under its team's folder, its index the
board's CSV to the last digit.
"""

from __future__ import annotations

import csv
import http.client
import io
import json
import os
import re
import socketserver
import threading
import zipfile
from collections.abc import Iterator
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command

from leaderboard import archives
from leaderboard.embedded_server import EmbeddedServer
from leaderboard.management.commands.load_demo import DEMO_PASSWORD, EMOTIONS_SLUG, ROOT_SLUG, SLUG, SUBTASK_B_SLUG
from leaderboard.models import Phase, Submission

pytestmark = [pytest.mark.walk, pytest.mark.django_db(transaction=True)]

WALKED = ("/tasks/", "/api/")
LOG_IN = "/accounts/login/"


class ThreadedServer(socketserver.ThreadingMixIn, EmbeddedServer):
    daemon_threads = True


@pytest.fixture
def demo() -> Iterator[int]:
    """The demo loaded, served on a free port of the loopback; the port."""
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    httpd = ThreadedServer(("127.0.0.1", 0))
    httpd.set_app(WSGIHandler())
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_port
    httpd.shutdown()
    httpd.server_close()


class Links(HTMLParser):
    """The addresses a page links to: its anchors and the frames it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"a": "href", "iframe": "src"}.get(tag)
        value = dict(attrs).get(wanted) if wanted else None
        if value:
            self.found.append(value)


class Visitor:
    """A person with a browser's cookies, on the demo's server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        connection.request(method, path, body=body or None, headers={"Cookie": cookie, **(headers or {})})
        response = connection.getresponse()
        content = response.read()  # a body cut short raises here (http.client.IncompleteRead)
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";")[0]
        connection.close()
        return response, content

    def log_in(self, username: str) -> None:
        """Through the log-in form, as a person does."""
        _, page = self.request("GET", LOG_IN)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        form = urlencode({"csrfmiddlewaretoken": token, "username": username, "password": DEMO_PASSWORD}).encode()
        response, _ = self.request(
            "POST",
            LOG_IN,
            form,
            {"Content-Type": "application/x-www-form-urlencoded", "Referer": f"http://127.0.0.1:{self.port}{LOG_IN}"},
        )
        assert response.status == 302, f"{username} could not log in"


def shape(address: str) -> tuple[str, tuple[str, ...]]:
    """A path and the names of its parameters: addresses that differ only in their values are
    followed once."""
    parts = urlsplit(address)
    return parts.path, tuple(sorted({name for name, _ in parse_qsl(parts.query, keep_blank_values=True)}))


def local_address(base: str, link: str, port: int) -> str | None:
    """``link`` (on the page at ``base``) as a path and query on the demo's server, if it is one
    to walk."""
    parts = urlsplit(urljoin(base, link))
    if parts.netloc not in ("", f"127.0.0.1:{port}", "testserver") or not parts.path.startswith(WALKED):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def json_addresses(value) -> Iterator[str]:
    """Every text in a JSON answer that is an address on the site."""
    if isinstance(value, dict):
        for item in value.values():
            yield from json_addresses(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_addresses(item)
    elif isinstance(value, str) and value.startswith(("http://", "/")) and ("/api/" in value or "/tasks/" in value):
        yield value


def check_download(address: str, kind: str, content: bytes) -> None:
    """What each kind of file must be: a zip that opens and reads back whole, a CSV whose every
    line has the header's fields, JSON that parses."""
    if kind == "application/zip":
        archive = zipfile.ZipFile(io.BytesIO(content))
        assert archive.testzip() is None, f"{address}: a member of the zip does not read back whole"
        assert archive.namelist(), f"{address}: an empty zip"
    elif kind == "text/csv":
        rows = list(csv.reader(io.StringIO(content.decode("utf-8-sig"))))
        assert rows, f"{address}: an empty CSV"
        assert {len(row) for row in rows} == {len(rows[0])}, f"{address}: a line without the header's fields"


def walk(visitor: Visitor) -> dict[str, str]:
    """Every address reachable from the home page, with the kind of content each answered."""
    seen_shapes: set[tuple[str, tuple[str, ...]]] = set()
    queue, answered, problems = ["/"], {}, []
    while queue:
        address = queue.pop()
        try:
            response, content = visitor.request("GET", address)
        except http.client.IncompleteRead as cut:
            problems.append(f"{address} was cut short after {len(cut.partial):,} bytes")
            continue
        kind = (response.getheader("Content-Type") or "").split(";")[0]
        if response.status in (301, 302):
            location = local_address(address, response.getheader("Location"), visitor.port)
            targets = [location] if location else []
        elif response.status == 404 or response.status >= 500:
            problems.append(f"{address} answered {response.status}")
            continue
        else:
            answered[address] = kind
            targets = []
            if kind == "text/html":
                parser = Links()
                parser.feed(content.decode())
                targets = [local_address(address, link, visitor.port) for link in parser.found]
            elif kind == "application/json":
                targets = [local_address(address, link, visitor.port) for link in json_addresses(json.loads(content))]
            else:
                check_download(address, kind, content)
        for target in targets:
            if target and shape(target) not in seen_shapes:
                seen_shapes.add(shape(target))
                queue.append(target)
    assert problems == []
    return answered


def reached(answered: dict[str, str], *fragments: str) -> bool:
    return all(any(fragment in address for address in answered) for fragment in fragments)


def test_an_anonymous_visitor_follows_every_link(demo):
    answered = walk(Visitor(demo))
    for subtask in (SLUG, SUBTASK_B_SLUG, EMOTIONS_SLUG):
        assert reached(
            answered,
            f"/tasks/{subtask}/phases/evaluation/leaderboard.csv",
            f"/tasks/{subtask}/phases/evaluation/disagreements/",
            f"/tasks/{subtask}/phases/evaluation/analysis.json",
            f"/tasks/{subtask}/phases/evaluation/what-if/",
        )
    assert reached(answered, f"/tasks/{ROOT_SLUG}/", "/api/tasks", "/api/docs")
    assert not reached(answered, "runs.zip")


def test_a_team_member_follows_every_link(demo):
    visitor = Visitor(demo)
    visitor.log_in("team-a")
    answered = walk(visitor)
    assert reached(
        answered,
        *(f"/tasks/{task}/phases/evaluation/runs.zip" for task in (SLUG, SUBTASK_B_SLUG, EMOTIONS_SLUG)),
    )
    assert reached(answered, f"/tasks/{ROOT_SLUG}/team/", "/submissions/")


def test_the_organiser_follows_every_link(demo):
    visitor = Visitor(demo)
    visitor.log_in("organiser")
    answered = walk(visitor)
    for subtask, phases in (
        (SLUG, ("development", "evaluation")),
        (SUBTASK_B_SLUG, ("evaluation",)),
        (EMOTIONS_SLUG, ("evaluation",)),
    ):
        for phase in phases:
            assert reached(
                answered, f"/tasks/{subtask}/phases/{phase}/runs/", f"/tasks/{subtask}/phases/{phase}/runs.zip"
            )
    assert reached(answered, f"/tasks/{ROOT_SLUG}/registrations/", f"/tasks/{EMOTIONS_SLUG}/bundle.zip")


def test_the_organisers_archive_of_every_phase_of_the_demo_is_the_board_to_the_last_digit(demo, client):
    """Every phase of both subtasks: every run under its team's folder with its exact bytes, and
    the runs that count carry the board CSV's cells, value and rank, under every column."""
    client.force_login(get_user_model().objects.get(username="organiser"))
    phases = Phase.objects.filter(task__slug__in=(SLUG, SUBTASK_B_SLUG, EMOTIONS_SLUG)).select_related("task")
    assert sorted((phase.task.slug, phase.slug) for phase in phases) == [
        (SLUG, "development"),
        (SLUG, "evaluation"),
        (SUBTASK_B_SLUG, "evaluation"),
        (EMOTIONS_SLUG, "evaluation"),
    ]
    for phase in phases:
        base = f"/tasks/{phase.task.slug}/phases/{phase.slug}"
        archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(f"{base}/runs.zip").streaming_content)))
        assert archive.testzip() is None
        index = list(csv.DictReader(io.StringIO(archive.read("runs.csv").decode())))
        letters = "ABCDEF" if phase.task.slug == EMOTIONS_SLUG else "ABCDEFGH"
        assert len(index) == phase.submissions.count() and {row["team"] for row in index} == {
            f"Team {letter}" for letter in letters
        }
        board = list(csv.DictReader(io.StringIO(client.get(f"{base}/leaderboard.csv").content.decode())))
        board_rows = {row["submission"]: row for row in board if row["kind"] == "team"}
        metrics = list(board[0])[list(board[0]).index("submission") + 1 :]
        shared = [column for column in metrics if column in index[0]]
        assert len(shared) > 40  # every metric, raw and calibrated, with its rank (of 11 emotions: their means)
        for row in index:
            run = Submission.objects.select_related("file", "team").get(pk=row["run"])
            assert row["file"] == f"{archives.folder_name(run.team.name)}/{run.pk}-{run.file.name}"
            assert archive.read(row["file"]) == bytes(run.file.content)
            if row["counts"] == "yes":
                assert [row[column] for column in shared] == [board_rows[row["run"]][column] for column in shared]
        assert sorted(row["run"] for row in index if row["counts"] == "yes") == sorted(board_rows)
