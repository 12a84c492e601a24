"""Counting requests in fixed windows in the cache (``settings.CACHES``): per process by
default, shared by every worker once ``CACHE_URL`` points at Redis.

``cache.add`` then ``cache.incr`` is atomic on both backends, so parallel requests cannot
overrun a limit. A fixed window lets at most twice the limit through around a window's edge;
that is enough to stop a runaway script, which is what this is for.
"""

from __future__ import annotations

import math
import time

from django.core.cache import cache

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
