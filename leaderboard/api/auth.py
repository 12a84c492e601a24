"""Who is asking: a token (``Authorization: Bearer <token>``), else the browser's session for
reading, else an anonymous visitor for reading. Uploads need a token.

Requests with an unknown or revoked token are counted per address (the client's, behind a
trusted proxy: :mod:`leaderboard.addresses`), and past ``API_AUTH_FAILURE_LIMIT`` in
``API_AUTH_FAILURE_WINDOW`` seconds that address is refused before any look-up: 429 with
``Retry-After``. Token requests are throttled per token by ninja's throttling
(:class:`leaderboard.api.throttling.TokenRate`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from ninja.security import HttpBearer

from leaderboard.addresses import client_address
from leaderboard.api import problems, throttling
from leaderboard.api.problems import ApiError
from leaderboard.models import ApiToken
from leaderboard.selectors.tokens import token_by_secret
from leaderboard.services.tokens import token_touch

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class Caller:
    """The person behind a request (``AnonymousUser`` for a visitor) and the token used, if any."""

    user: object
    token: ApiToken | None = None


def _failures_of(request: HttpRequest) -> str:
    """Whose bad tokens a request's count towards: its client's address."""
    return client_address(request) or "unknown"


def _unauthorized(problem: problems.Problem) -> ApiError:
    return ApiError.of(401, problem, headers={"WWW-Authenticate": 'Bearer realm="api"'})


def _check_failures(request: HttpRequest) -> None:
    window = settings.API_AUTH_FAILURE_WINDOW
    if throttling.counted(scope="auth-failure", ident=_failures_of(request), window_s=window) >= (
        settings.API_AUTH_FAILURE_LIMIT
    ):
        wait = throttling.wait_s(window_s=window)
        raise ApiError.of(429, problems.AUTH_THROTTLED, headers={"Retry-After": str(wait)}, wait=wait)


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
                scope="auth-failure", ident=_failures_of(request), window_s=settings.API_AUTH_FAILURE_WINDOW
            )
            raise _unauthorized(problems.TOKEN_INVALID)
        token_touch(token=found)
        request.user = found.user
        return Caller(user=found.user, token=found)
