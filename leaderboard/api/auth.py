"""Who is asking: a token (``Authorization: Bearer <token>``), else the browser's session for
reading, else an anonymous visitor for reading. Uploads need a token.

Token requests are throttled per token (``API_TOKEN_RATE_LIMIT`` per ``API_TOKEN_RATE_WINDOW``
seconds); requests with an unknown or revoked token are counted per address, and past
``API_AUTH_FAILURE_LIMIT`` in ``API_AUTH_FAILURE_WINDOW`` seconds that address is refused
before any look-up. Both refusals are 429 with ``Retry-After``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from ninja.security import HttpBearer

from leaderboard.api import problems, throttling
from leaderboard.api.problems import ApiError
from leaderboard.api.tokens import token_by_secret, token_touch
from leaderboard.models import ApiToken

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class Caller:
    """The person behind a request (``AnonymousUser`` for a visitor) and the token used, if any."""

    user: object
    token: ApiToken | None = None


def client_address(request: HttpRequest) -> str:
    """The address failures are counted for. ``REMOTE_ADDR``: behind a proxy, the proxy must
    set it (gunicorn's ``forwarded_allow_ips``), never a header a client can forge."""
    return request.META.get("REMOTE_ADDR") or "unknown"


def _unauthorized(problem: problems.Problem) -> ApiError:
    return ApiError.of(401, problem, headers={"WWW-Authenticate": 'Bearer realm="api"'})


def _check_failures(request: HttpRequest) -> None:
    window = settings.API_AUTH_FAILURE_WINDOW
    if throttling.counted(scope="auth-failure", ident=client_address(request), window_s=window) >= (
        settings.API_AUTH_FAILURE_LIMIT
    ):
        wait = throttling.wait_s(window_s=window)
        raise ApiError.of(429, problems.AUTH_THROTTLED, headers={"Retry-After": str(wait)}, wait=wait)


def _check_rate(token: ApiToken) -> None:
    window = settings.API_TOKEN_RATE_WINDOW
    limit = settings.API_TOKEN_RATE_LIMIT
    if throttling.count(scope="token", ident=str(token.pk), window_s=window) > limit:
        wait = throttling.wait_s(window_s=window)
        raise ApiError.of(
            429, problems.TOKEN_THROTTLED, headers={"Retry-After": str(wait)}, limit=limit, window=window, wait=wait
        )


class ApiAuth(HttpBearer):
    """The API's one authentication: never returns ``None``, so ninja tries nothing else; a
    refusal raises :class:`ApiError` (401 or 429)."""

    def __call__(self, request: HttpRequest) -> Caller:
        header = request.headers.get(self.header, "")
        if not header:
            if request.method not in SAFE_METHODS:
                raise _unauthorized(problems.TOKEN_REQUIRED)
            return Caller(user=request.user)
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != self.openapi_scheme or not secret.strip():
            raise _unauthorized(problems.TOKEN_MALFORMED)
        return self.authenticate(request, secret.strip())

    def authenticate(self, request: HttpRequest, token: str) -> Caller:
        _check_failures(request)
        found = token_by_secret(token)
        if found is None:
            throttling.count(
                scope="auth-failure", ident=client_address(request), window_s=settings.API_AUTH_FAILURE_WINDOW
            )
            raise _unauthorized(problems.TOKEN_INVALID)
        _check_rate(found)
        token_touch(token=found)
        request.user = found.user
        return Caller(user=found.user, token=found)
