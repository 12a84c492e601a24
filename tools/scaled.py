"""The scaled set-up on loopback, for the benchmarks that drive it over HTTP (load_rush.py,
faults.py): a database of its own, the production settings of every process, and a client
that keeps its cookies and connection as a browser does.

No Django here: a script imports it before it sets Django up.
"""

from __future__ import annotations

import http.client
import re
import secrets
import socket
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import psycopg

REQUEST_TIMEOUT_S = 120
PASSWORD = "scaled-set-up-password"
"""The password of every user the benchmarks make."""
CSRF_INPUT = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
SUBMISSION_PATH = re.compile(r"/submissions/(\d+)/$")


def database_admin(admin_url: str, statement: str) -> None:
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as admin:
        admin.execute(statement)


def database_url(admin_url: str, name: str) -> str:
    """A database's URL: the admin URL with the database swapped."""
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def recreate_database(admin_url: str, name: str) -> None:
    database_admin(admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    database_admin(admin_url, f"CREATE DATABASE {name}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(*, database_url: str, redis_url: str, run_dir: Path, port: int, **extra: str) -> dict[str, str]:
    """The settings of every process of a run: production, on loopback only."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings.prod",
        "SECRET_KEY": secrets.token_urlsafe(60),
        "ALLOWED_HOSTS": "127.0.0.1",
        "INSECURE_HTTP_FOR_LOCAL_BENCHMARK": "true",
        "SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": database_url,
        "CONN_MAX_AGE": "60",
        "TASKS_BACKEND": "rq",
        "REDIS_URL": redis_url,
        "CACHE_URL": redis_url,  # the documented scaled set-up shares its cache in Redis
        "LEADERBOARD_VAR_DIR": str(run_dir / "var"),
        "LOG_LEVEL": "WARNING",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_ACCESS_LOG": str(run_dir / "access.log"),
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


@dataclass
class Response:
    status: int
    location: str
    body: bytes
    latency_ms: float


@dataclass
class Browser:
    """One client with its cookies; a new connection per request, or one kept open as browsers
    keep theirs (``keep_alive``; opened again when the server has closed it)."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)
    accepts_gzip: bool = False
    """Say ``Accept-Encoding: gzip``, as every browser does."""
    keep_alive: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    """Sent with every request (an API token)."""
    _connection: http.client.HTTPConnection | None = field(default=None, repr=False)

    def _exchange(self, method: str, path: str, body: bytes | None, headers: dict[str, str]):
        if self._connection is None:
            self._connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT_S)
        try:
            self._connection.request(method, path, body=body, headers=headers)
            answer = self._connection.getresponse()
            return answer, answer.read()
        finally:
            if not self.keep_alive or self._connection.sock is None:
                self._connection.close()
                self._connection = None

    def request(self, method: str, path: str, *, body: bytes | None = None, content_type: str = "") -> Response:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **self.headers}
        if self.accepts_gzip:
            headers["Accept-Encoding"] = "gzip"
        if content_type:
            headers["Content-Type"] = content_type
        started = time.perf_counter()
        try:
            answer, content = self._exchange(method, path, body, headers)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            if not self.keep_alive:
                raise
            # The server closed the kept connection (its keep-alive time is over): a new one.
            started = time.perf_counter()
            answer, content = self._exchange(method, path, body, headers)
        latency_ms = (time.perf_counter() - started) * 1000
        for header in answer.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return Response(answer.status, answer.headers.get("Location", ""), content, latency_ms)

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def post_form(self, path: str, fields: dict[str, str]) -> Response:
        return self.request(
            "POST", path, body=urlencode(fields).encode(), content_type="application/x-www-form-urlencoded"
        )


def answers(port: int) -> bool:
    """Whether the server on ``port`` serves its log-in page."""
    try:
        return Browser(port).get("/accounts/login/").status == 200
    except OSError:
        return False


def csrf_token(page: Response) -> str:
    match = CSRF_INPUT.search(page.body)
    if match is None:
        raise RuntimeError(f"no CSRF token in a page answered with HTTP {page.status}")
    return match.group(1).decode()


def multipart(fields: dict[str, str], *, file_field: str, file_name: str, content: bytes) -> tuple[bytes, str]:
    boundary = "scaled-" + secrets.token_hex(12)
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{file_name}"\r\n'
        f"Content-Type: text/csv\r\n\r\n".encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def log_in(browser: Browser, username: str, *, task_slug: str) -> str:
    """Log in through the form; returns the CSRF token of the task page's forms."""
    token = csrf_token(browser.get("/accounts/login/"))
    answer = browser.post_form(
        "/accounts/login/", {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    if answer.status != 302:
        raise RuntimeError(f"log-in of {username} answered HTTP {answer.status}")
    return csrf_token(browser.get(f"/tasks/{task_slug}/"))  # the token changes at log-in
