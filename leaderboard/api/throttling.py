"""Counting requests in fixed windows in the cache (``settings.CACHES``): per process by
default, shared by every worker once ``CACHE_URL`` points at Redis.

``cache.add`` then ``cache.incr`` is atomic on both backends, so parallel requests cannot
overrun a limit. A fixed window lets at most twice the limit through around a window's edge;
that is enough to stop a runaway script, which is what this is for.

:class:`TokenRate` plugs the per-token limit into django-ninja's throttling (the API's
``throttle=``; ninja answers 429 with ``Retry-After``). Ninja's own rate classes keep a list of
times per key, read and written back without a lock, and keep per-request state on an
instance that every thread of a worker shares: under parallel requests they count too few.
The limit on bad tokens is counted in :mod:`leaderboard.api.auth`, before any look-up, where no
throttle of ninja's runs (they run after authentication).
"""

from __future__ import annotations

import math
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from ninja.throttling import BaseThrottle

PREFIX = "api-throttle"


def _key(scope: str, ident: str, window_s: int, now: float) -> tuple[str, float]:
    bucket = int(now // window_s)
    return f"{PREFIX}:{scope}:{ident}:{bucket}", (bucket + 1) * window_s - now


def count(*, scope: str, ident: str, window_s: int) -> int:
    """Count one request of ``ident`` in the current window; returns the count so far."""
    key, remaining = _key(scope, ident, window_s, time.time())
    cache.add(key, 0, timeout=math.ceil(remaining) + 1)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=math.ceil(remaining) + 1)
        return 1


def counted(*, scope: str, ident: str, window_s: int) -> int:
    """How many requests of ``ident`` the current window holds (without counting one)."""
    key, _ = _key(scope, ident, window_s, time.time())
    return cache.get(key, 0)


def wait_s(*, window_s: int) -> int:
    """Whole seconds until the current window ends (for ``Retry-After``), at least 1."""
    return max(1, math.ceil(_key("", "", window_s, time.time())[1]))


class TokenRate(BaseThrottle):
    """Requests with a token: at most ``API_TOKEN_RATE_LIMIT`` per ``API_TOKEN_RATE_WINDOW``
    seconds per token. Requests without one (anonymous or session reading) are not counted."""

    def allow_request(self, request: HttpRequest) -> bool:
        token = getattr(getattr(request, "auth", None), "token", None)
        if token is None:
            return True
        window = settings.API_TOKEN_RATE_WINDOW
        return count(scope="token", ident=str(token.pk), window_s=window) <= settings.API_TOKEN_RATE_LIMIT

    def wait(self) -> float:
        return wait_s(window_s=settings.API_TOKEN_RATE_WINDOW)
