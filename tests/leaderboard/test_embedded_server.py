"""A download is whole or visibly failed, on the embedded set-up's own server (what
``manage.py runserver`` and ``make demo`` run).

What this proves: through a real HTTP connection, a zip of runs that fails after its first
entry ends without the last chunk of its body, so the client reports a failed download
(``http.client.IncompleteRead``, as ``curl`` reports its error 18) instead of keeping a
truncated file, and the failure is logged; the same download, whole, ends with its last chunk
and opens; a page of known length is sent as before, and an HTTP/1.0 client, which reads no
chunks, gets the body until the connection closes.
"""

from __future__ import annotations

import http.client
import io
import logging
import socketserver
import threading
import zipfile

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import get_commands, load_command_class
from django.test import Client

from leaderboard import archives
from leaderboard.embedded_server import EmbeddedServer
from leaderboard.services.teams import team_create
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db(transaction=True)


class ThreadedServer(socketserver.ThreadingMixIn, EmbeddedServer):
    """As ``runserver`` makes it: a thread per request."""

    daemon_threads = True


@pytest.fixture
def server():
    """The embedded server on a free port of the loopback, serving the site."""
    httpd = ThreadedServer(("127.0.0.1", 0))
    httpd.set_app(WSGIHandler())
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_port
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def archive_path(make_task, make_user, organiser, submit) -> tuple[str, str]:
    """The path of a subtask's phase's zip of runs (two teams of the parent, a run each), and
    the organiser's session cookie."""
    task = make_task(kind="subtask")
    for name, content in (("Alpha", PERFECT), ("Beta", MOSTLY_A)):
        member = make_user(name.lower())
        team_create(task=task, user=member, name=name)
        submit(task, member, content)
    client = Client()
    client.force_login(organiser)
    phase = task.current_phase()
    return f"/tasks/{task.slug}/phases/{phase.slug}/runs.zip", f"sessionid={client.cookies['sessionid'].value}"


def get(port: int, path: str, cookie: str = "", *, version: str = "HTTP/1.1") -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    if version == "HTTP/1.0":
        connection._http_vsn, connection._http_vsn_str = 10, "HTTP/1.0"
    connection.request("GET", path, headers={"Cookie": cookie, "Accept-Encoding": "identity"})
    return connection.getresponse()


def test_runserver_serves_on_the_embedded_server():
    command = load_command_class(get_commands()["runserver"], "runserver")
    assert command.server_cls is EmbeddedServer


def test_a_whole_download_ends_with_its_last_chunk_and_opens(server, archive_path):
    path, cookie = archive_path
    response = get(server, path, cookie)
    assert (response.status, response.getheader("Transfer-Encoding")) == (200, "chunked")
    archive = zipfile.ZipFile(io.BytesIO(response.read()))
    assert archive.testzip() is None
    assert sorted(name.split("/")[0] for name in archive.namelist()) == ["Alpha", "Beta", "README.txt", "runs.csv"]


def test_a_download_that_fails_after_its_first_entry_is_seen_to_fail(server, archive_path, monkeypatch, caplog):
    path, cookie = archive_path

    def failing_index(view, folders):
        raise RuntimeError("the database went away")
        yield b""  # a generator, as the index is

    monkeypatch.setattr(archives, "index_lines", failing_index)
    with caplog.at_level(logging.ERROR, logger="leaderboard.views.common"):
        response = get(server, path, cookie)
        assert response.status == 200  # the README has gone out: the status cannot change any more
        with pytest.raises(http.client.IncompleteRead) as cut:
            response.read()
    received = cut.value.partial
    assert received.startswith(b"PK") and b"README.txt" in received
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(io.BytesIO(received))
    assert any("failed after its first bytes" in record.getMessage() for record in caplog.records)


def test_a_failure_before_the_first_byte_answers_an_error(server, archive_path, monkeypatch):
    path, cookie = archive_path

    def failing_readme(*args, **kwargs):
        raise RuntimeError("nothing to write")

    monkeypatch.setattr(archives, "readme_text", failing_readme)
    response = get(server, path, cookie)
    assert response.status == 500 and response.getheader("Content-Type", "").startswith("text/html")
    response.read()


def test_a_page_of_known_length_and_an_http_1_0_client_are_served_as_before(server, archive_path):
    path, cookie = archive_path
    page = get(server, "/", cookie)
    assert page.getheader("Content-Length") and not page.getheader("Transfer-Encoding")
    assert b"Shared tasks" in page.read()
    old_client = get(server, path, cookie, version="HTTP/1.0")
    assert old_client.getheader("Transfer-Encoding") is None
    assert zipfile.ZipFile(io.BytesIO(old_client.read())).testzip() is None
