"""Whole results pages for anonymous visitors: served from the cache, not rendered again.

During a deadline rush the scores change several times a second, and each change made the next
reader of a 500-team board rebuild it (its rows, its template) on cores busy with uploads and
scoring: 1.75 s at the 95th percentile, 5.9 s for the disagreement page. Here a page an anonymous
visitor asks for is kept whole (its HTML, compressed: sent so to browsers, which all accept
gzip, and a tenth of the bytes to read and send), one entry per path (with its query), beside
the key of everything it showed when it was built (:func:`leaderboard.caching.page_key`: the
phase's settings, the scores stamp, the bootstrap intervals' token, the phase's open/closed state
and the path).

A reader's cost, in order:

- **recent**: the page was found current (or its rebuild was started) less than
  ``RESULT_PAGE_FRESH_S`` ago: it is served as it is, before the task is looked up
  (:func:`recent_page`), for one cache read and no query; and for the rest of that window a
  process that has read it once serves it from its own memory, without the cache. A page so
  served is at most that many seconds behind the scores, and a board hidden meanwhile stays
  visible that long at most.
- **hit**: the task and its phases are read (may this visitor see the board?), then the stamp
  (two more queries), and the page is current.
- **stale**: the scores have changed: the reader gets the page as last built and one thread
  rebuilds it. At most one rebuild per page runs at a time across every process sharing the
  cache (a lock in the cache), and a page is rebuilt at most once every
  ``RESULT_PAGE_REBUILD_EVERY_S`` (so that rebuilds of a large board cannot run back to back
  and take the cores from the uploads). The page shown is thus at most a rebuild and that
  interval behind.
- **miss**: nobody has built the page yet (or it expired): the first reader builds it while the
  others wait for that build rather than building it too (for up to ``COLD_WAIT_S``).

With ``RESULT_PAGE_REBUILD_IN_THREAD`` off (tests) the request that finds the page out of date
rebuilds it and gets the new one (``miss``). Logged-in people (their name, their team, their
forms) always get a page rendered for them, from the same cached pieces as before.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connections
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers

from leaderboard import caching, stability
from leaderboard.models import Phase

logger = logging.getLogger(__name__)

BUILD_LOCK_S = 120
"""A build's lock expires after this, should its process die before it lets go."""
COLD_WAIT_S = 30.0
"""How long a reader of a page nobody has built waits for another reader's build of it."""
COLD_POLL_S = 0.05
STATUS_HEADER = "X-Page-Cache"
"""``recent``, ``hit``, ``stale``, ``miss`` or ``waited`` (built by another reader meanwhile):
see the module."""

PageView = Callable[..., HttpResponse]

RECENT_PAGES_KEPT = 64
"""Pages a process keeps in its own memory for the rest of their freshness window (the oldest
goes first): a few large boards' compressed HTML."""
_recent_pages: dict[str, tuple[float, dict[str, Any]]] = {}
"""Path → (the end of the page's freshness window, as a Unix time; the page)."""
_recent_pages_lock = threading.Lock()
"""Held while the kept pages change: a worker's threads keep pages side by side."""


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


@dataclass(frozen=True)
class _Keys:
    """The cache entries of one page (one path, with its query)."""

    page: str
    """The page as last built: its HTML, its content type and the key it was built under."""
    checked: str
    """Present for ``RESULT_PAGE_FRESH_S`` after the page was found current or sent for
    rebuilding; its value is when (a Unix time), so that every process knows when it ends."""
    building: str
    """The lock of the one build under way."""
    rebuilt: str
    """Present for ``RESULT_PAGE_REBUILD_EVERY_S`` after a rebuild: no other starts meanwhile."""

    @classmethod
    def of(cls, path: str) -> _Keys:
        """The entries of the page at ``path`` (with its query): by path alone, so that a reader
        may be answered before the task is looked up; the phase is in the key it was built under."""
        base = f"{caching.KEY_PREFIX}whole-gz:{hashlib.sha256(path.encode()).hexdigest()}"
        return cls(page=base, checked=f"{base}:checked", building=f"{base}:building", rebuilt=f"{base}:rebuilt")


def _accepts_gzip(request: HttpRequest) -> bool:
    return "gzip" in request.headers.get("Accept-Encoding", "").lower()


def _response(request: HttpRequest, page: dict[str, Any], status: str) -> HttpResponse:
    """The stored page, sent compressed to a client that accepts gzip (every browser does)."""
    if _accepts_gzip(request):
        response = HttpResponse(page["gzip"], content_type=page["content_type"])
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(page["gzip"]), content_type=page["content_type"])
    patch_vary_headers(response, ["Accept-Encoding"])
    response[STATUS_HEADER] = status
    return response


def _build(request: HttpRequest, build: Callable[[], HttpResponse], keys: _Keys, key: str) -> HttpResponse:
    """Build the page and, if it may be shared, store it as the page of ``key``: compressed, a
    tenth of its size for a large board, so that reading it from the cache and sending it take
    a tenth of the time. (Compression is safe here: a shared page holds no secret, no CSRF token.)"""
    response = build()
    if _shareable(request, response):
        compressed = gzip.compress(response.content, compresslevel=6, mtime=0)
        page = {"gzip": compressed, "content_type": response["Content-Type"], "key": key}
        cache.set(keys.page, page, caching.CACHE_TIMEOUT_S)
    return response


def _rebuild(request: HttpRequest, build: Callable[[], HttpResponse], keys: _Keys, key: str) -> None:
    """A rebuild in a thread: build, store, let go of the lock, and hold off the next rebuild."""
    try:
        _build(request, build, keys, key)
    except Exception:
        logger.exception("rebuilding the cached page %s failed", request.get_full_path())
    finally:
        _built(keys)
        connections.close_all()  # this thread's connections, not the request's


def _built(keys: _Keys) -> None:
    if settings.RESULT_PAGE_REBUILD_EVERY_S > 0:
        cache.set(keys.rebuilt, 1, settings.RESULT_PAGE_REBUILD_EVERY_S)
    cache.delete(keys.building)


def _checked(keys: _Keys) -> bool:
    """Start the page's freshness window; whether this call started it (none was under way)."""
    return settings.RESULT_PAGE_FRESH_S > 0 and cache.add(keys.checked, time.time(), settings.RESULT_PAGE_FRESH_S)


def _keep_recent(path: str, page: dict[str, Any], *, until: float) -> None:
    with _recent_pages_lock:
        while len(_recent_pages) >= RECENT_PAGES_KEPT:
            del _recent_pages[next(iter(_recent_pages))]
        _recent_pages[path] = (until, page)


def forget_recent_pages() -> None:
    """Drop the pages this process keeps for their freshness window (their windows end here)."""
    with _recent_pages_lock:
        _recent_pages.clear()


def _current_key(phase: Phase, path: str) -> str:
    """The key of everything the page shows now: two queries (the stamp) and the intervals' state."""
    stamp = caching.scores_stamp(phase)
    token = stability.intervals_token(phase=phase, stamp=stamp)
    return caching.page_key(phase, stamp, "whole", token, phase.has_opened(), phase.is_closed(), path)


def _built_by_another(keys: _Keys) -> dict[str, Any] | None:
    """Wait for the build another reader has under way; the page, or None (no build under way,
    or it took longer than :data:`COLD_WAIT_S`)."""
    deadline = time.monotonic() + COLD_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(COLD_POLL_S)
        page = cache.get(keys.page)
        if page is not None:
            return page
        if cache.get(keys.building) is None:
            return cache.get(keys.page)
    return None


def recent_page(request: HttpRequest) -> HttpResponse | None:
    """The page for an anonymous visitor if it was found current (or sent for rebuilding) less
    than ``RESULT_PAGE_FRESH_S`` ago: answered before the task is even looked up, with no query.
    That check was made for a visitor who could see the board, so a board hidden meanwhile is
    hidden from visitors at most that long after."""
    if not _may_share(request) or settings.RESULT_PAGE_FRESH_S <= 0:
        return None
    path = request.get_full_path()
    kept = _recent_pages.get(path)
    if kept is not None and time.time() < kept[0]:
        return _response(request, kept[1], "recent")
    keys = _Keys.of(path)
    found = cache.get_many([keys.page, keys.checked])
    page = found.get(keys.page)
    if page is None:
        return None
    if keys.checked in found:
        _keep_recent(path, page, until=float(found[keys.checked]) + settings.RESULT_PAGE_FRESH_S)
        return _response(request, page, "recent")
    # The window is over: one reader claims the next check (the stamp, the task, maybe a rebuild)
    # for the next window, and the others go on getting this page meanwhile.
    if not _checked(keys):
        return _response(request, page, "recent")
    return None


def visitor_page(request: HttpRequest, phase: Phase, build: Callable[[], HttpResponse]) -> HttpResponse:
    """The page ``build`` renders, from the cache for an anonymous visitor (see the module)."""
    if not _may_share(request):
        return build()
    path = request.get_full_path()
    keys = _Keys.of(path)
    page = cache.get(keys.page)
    key = _current_key(phase, path)
    if page is not None and page["key"] == key:
        _checked(keys)
        return _response(request, page, "hit")
    in_thread = settings.RESULT_PAGE_REBUILD_IN_THREAD
    if page is not None and in_thread:
        if cache.get(keys.rebuilt) is None and cache.add(keys.building, 1, BUILD_LOCK_S):
            threading.Thread(
                target=_rebuild, args=(request, build, keys, key), name="page-rebuild", daemon=True
            ).start()
        _checked(keys)
        return _response(request, page, "stale")
    if page is None and in_thread and not cache.add(keys.building, 1, BUILD_LOCK_S):
        built = _built_by_another(keys)
        if built is not None:
            return _response(request, built, "waited")
        return build()  # the other build failed or is too slow: this reader does not wait longer
    try:
        response = _build(request, build, keys, key)
    finally:
        if in_thread:
            _built(keys)
    if _shareable(request, response):
        response[STATUS_HEADER] = "miss"
    return response


def for_visitors(view: PageView) -> PageView:
    """A results view (``view(request, phase, ...)``) whose pages anonymous visitors share. The
    caller that looks the phase up first asks :func:`recent_page` (``shared_with_visitors``)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, phase: Phase, **kwargs: Any) -> HttpResponse:
        return visitor_page(request, phase, lambda: view(request, phase, **kwargs))

    wrapper.shared_with_visitors = True
    return wrapper
