"""Whole results pages for anonymous visitors: served from the cache, not rendered again.

During a deadline rush the scores change several times a second, and each change made the next
reader of a 500-team board rebuild it (its rows, its template) on cores busy with uploads and
scoring: 1.75 s at the 95th percentile, 5.9 s for the disagreement page. Here a page an anonymous
visitor asks for is kept whole (its HTML) under a key of everything it shows
(:func:`leaderboard.caching.page_key`: the phase's settings, the scores stamp, the bootstrap
intervals' token, the phase's open/closed state and the full path with its query), so that a
reader of an unchanged board costs four small queries (the task, its phases, the stamp's two)
and a cache read.

When the scores have changed, the reader gets the page as last built (its scores a rebuild
behind, never more) and one thread rebuilds it; at most one rebuild per page runs at a time,
across every process sharing the cache (a lock in the cache). Readers therefore never wait for a
rebuild except the first reader of a page nobody has built yet. With
``RESULT_PAGE_REBUILD_IN_THREAD`` off (tests) the request that finds the page out of date
rebuilds it and gets the new one. Logged-in people (their name, their team, their forms) always
get a page rendered for them, from the same cached pieces as before.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connections
from django.http import HttpRequest, HttpResponse

from leaderboard import caching, stability
from leaderboard.models import Phase

logger = logging.getLogger(__name__)

REBUILD_LOCK_S = 120
"""A rebuild's lock expires after this, should its process die before it lets go."""
STATUS_HEADER = "X-Page-Cache"
"""``hit`` (current), ``stale`` (the previous version, one rebuild behind), ``miss`` (built now)."""

PageView = Callable[..., HttpResponse]


def _may_share(request: HttpRequest) -> bool:
    """A page built for this request may be shown to anybody: an anonymous GET with no
    session (which could carry messages for this visitor alone)."""
    return (
        settings.RESULT_PAGE_CACHE
        and request.method == "GET"
        and not request.user.is_authenticated
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "messages" not in request.COOKIES
    )


def _shareable(request: HttpRequest, response: HttpResponse) -> bool:
    """Whether a rendered response holds nothing of this visitor's (no cookie, no CSRF token)."""
    return (
        response.status_code == 200
        and not response.streaming
        and not response.cookies
        and not request.META.get("CSRF_COOKIE_NEEDS_UPDATE")
    )


def _page_path_key(phase: Phase, path: str) -> str:
    digest = hashlib.sha256(path.encode()).hexdigest()
    return f"{caching.KEY_PREFIX}whole:{phase.pk}:{digest}"


def _stored(response: HttpResponse) -> dict[str, Any]:
    return {"content": response.content, "content_type": response["Content-Type"]}


def _response(page: dict[str, Any], status: str) -> HttpResponse:
    response = HttpResponse(page["content"], content_type=page["content_type"])
    response[STATUS_HEADER] = status
    return response


def _store(key: str, latest_key: str, page: dict[str, Any]) -> None:
    cache.set(key, page, caching.CACHE_TIMEOUT_S)
    cache.set(latest_key, page, caching.CACHE_TIMEOUT_S)


def _rebuild(request: HttpRequest, build: Callable[[], HttpResponse], key: str, latest_key: str, lock: str) -> None:
    """Build the page and store it as current and as the latest; let go of the lock."""
    try:
        response = build()
        if _shareable(request, response):
            _store(key, latest_key, _stored(response))
    except Exception:
        logger.exception("rebuilding the cached page %s failed", request.get_full_path())
    finally:
        cache.delete(lock)
        connections.close_all()  # this thread's connections, not the request's


def visitor_page(request: HttpRequest, phase: Phase, build: Callable[[], HttpResponse]) -> HttpResponse:
    """The page ``build`` renders, from the cache for an anonymous visitor (see the module)."""
    if not _may_share(request):
        return build()
    stamp = caching.scores_stamp(phase)
    token = stability.intervals_of(phase=phase, stamp=stamp).token
    path = request.get_full_path()
    key = caching.page_key(phase, stamp, "whole", token, phase.has_opened(), phase.is_closed(), path)
    page = cache.get(key)
    if page is not None:
        return _response(page, "hit")
    latest_key = _page_path_key(phase, path)
    latest = cache.get(latest_key) if settings.RESULT_PAGE_REBUILD_IN_THREAD else None
    if latest is not None:
        lock = f"{latest_key}:rebuilding"
        if cache.add(lock, 1, REBUILD_LOCK_S):
            threading.Thread(
                target=_rebuild, args=(request, build, key, latest_key, lock), name="page-rebuild", daemon=True
            ).start()
        return _response(latest, "stale")
    response = build()
    if _shareable(request, response):
        _store(key, latest_key, _stored(response))
        response[STATUS_HEADER] = "miss"
    return response


def for_visitors(view: PageView) -> PageView:
    """A results view (``view(request, phase, ...)``) whose pages anonymous visitors share."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, phase: Phase, **kwargs: Any) -> HttpResponse:
        return visitor_page(request, phase, lambda: view(request, phase, **kwargs))

    return wrapper
