"""Django's Redis cache, answering as an empty cache while Redis cannot be reached.

In the scaled set-up the cache (Redis) holds computed results pages and the API's request
counts; the database holds everything that matters. So a Redis outage must cost time, never an
error page: every operation that fails to reach Redis is answered as an empty cache would
answer it (a miss; a write that did not happen; a count of one), logged once, and for the next
``RETRY_AFTER_S`` seconds this process does not try Redis again, so that requests do not each
wait for a connection to time out.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 5.0
"""How long a process answers from nothing after Redis failed it, before it tries again."""


def _as_empty(fallback: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a cache operation: while Redis is down, or when it fails, answer ``fallback(...)``."""

    def wrap(operation: Callable[..., Any]) -> Callable[..., Any]:
        def method(self: ResilientRedisCache, *args: Any, **kwargs: Any) -> Any:
            if time.monotonic() < self._down_until:
                return fallback(*args, **kwargs)
            try:
                return operation(self, *args, **kwargs)
            except RedisError as error:
                self._went_down(error)
                return fallback(*args, **kwargs)

        method.__name__ = operation.__name__
        method.__doc__ = operation.__doc__
        return method

    return wrap


def _default(key: Any, default: Any = None, *args: Any, **kwargs: Any) -> Any:
    return default


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _claimed(*args: Any, **kwargs: Any) -> bool:
    """``add`` while down: the caller goes ahead (computes the page itself, counts nothing)."""
    return True


def _absent(*args: Any, **kwargs: Any) -> bool:
    return False


def _empty_dict(*args: Any, **kwargs: Any) -> dict:
    return {}


def _no_failed_keys(*args: Any, **kwargs: Any) -> list:
    return []


def _delta(key: Any, delta: int = 1, *args: Any, **kwargs: Any) -> int:
    return delta


class KeptClients(RedisCacheClient):
    """Django's Redis cache client, keeping one redis-py client per connection pool: Django
    makes a new one for every cache operation (0.15 ms each, its table of reply handlers
    copied), several per request. A redis-py client is safe to share between threads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class ResilientRedisCache(RedisCache):
    """:class:`~django.core.cache.backends.redis.RedisCache` that behaves as an empty cache
    while Redis cannot be reached (see the module)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = KeptClients
        self._down_until = 0.0
        self._lock = threading.Lock()

    def _went_down(self, error: RedisError) -> None:
        with self._lock:
            was_up = time.monotonic() >= self._down_until
            self._down_until = time.monotonic() + RETRY_AFTER_S
        if was_up:
            logger.warning(
                "the cache (Redis) cannot be reached: %s; working without it for %.0f s", error, RETRY_AFTER_S
            )

    get = _as_empty(_default)(RedisCache.get)
    get_many = _as_empty(_empty_dict)(RedisCache.get_many)
    has_key = _as_empty(_absent)(RedisCache.has_key)
    add = _as_empty(_claimed)(RedisCache.add)
    set = _as_empty(_nothing)(RedisCache.set)
    set_many = _as_empty(_no_failed_keys)(RedisCache.set_many)
    touch = _as_empty(_absent)(RedisCache.touch)
    delete = _as_empty(_absent)(RedisCache.delete)
    delete_many = _as_empty(_nothing)(RedisCache.delete_many)
    incr = _as_empty(_delta)(RedisCache.incr)
    clear = _as_empty(_nothing)(RedisCache.clear)
