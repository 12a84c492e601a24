"""What the view modules share: finding a task, checking its organiser, a file download, and a
refusal in words."""

from __future__ import annotations

import gzip
import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Iterator

import brotli
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.http import content_disposition_header

from leaderboard import errors
from leaderboard.models import Phase, Task
from leaderboard.selectors.participation import no_such_phase, phase_named, task_by_slug

logger = logging.getLogger(__name__)


def task_or_404(slug: str) -> Task:
    """The task at ``slug`` with its phases, or a 404."""
    task = task_by_slug(slug)
    if task is None:
        raise Http404("No such task.")
    return task


def phase_or_404(task: Task, slug: str | None) -> Phase:
    """The task's phase ``slug`` (``None``: its current one), or a 404 that names its phases."""
    phase = phase_named(task, slug)
    if phase is None:
        raise Http404(no_such_phase(task, slug))
    return phase


def organiser_task(request: HttpRequest, slug: str) -> Task:
    """The task at ``slug``, if this person organises it (403 otherwise)."""
    task = task_or_404(slug)
    if not task.is_organiser(request.user):
        raise PermissionDenied(errors.NOT_ORGANISER)
    return task


def download(content: bytes | str, *, filename: str, content_type: str = "text/csv; charset=utf-8") -> HttpResponse:
    """``content`` as an attachment named ``filename`` (quoted as RFC 6266 says)."""
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


ENCODINGS: dict[str, Callable[[bytes], bytes]] = {
    "br": lambda content: brotli.compress(content, quality=5),
    "gzip": lambda content: gzip.compress(content, compresslevel=6, mtime=0),
    "identity": bytes,
}
"""What a browser may accept, in the order of preference, and how each is written: Brotli at
quality 5 (4.8 MB of plotly.js in 1.3 MB, about as fast as gzip's 1.5 MB; quality 11 would take
12 s), then gzip."""
COMPRESSED_FOR_S = 24 * 3600


def compressed_once(
    request: HttpRequest, make: Callable[[], str], *, made_of: tuple, filename: str, content_type: str
) -> HttpResponse:
    """A large download that is the same for everyone who asks for what it is ``made_of`` (a
    figure offline, with plotly.js inside): written by ``make`` and compressed once for each
    encoding a browser accepts, then kept in the cache, so that it costs a cache read to every
    later reader. It holds no secret, so one compressed copy serves all."""
    accepted = request.headers.get("Accept-Encoding", "")
    encoding = next((name for name in ENCODINGS if re.search(rf"\b{name}\b(?!;q=0\b)", accepted)), "identity")
    key = "download:" + hashlib.sha256(repr((made_of, filename, content_type, encoding)).encode()).hexdigest()
    body = cache.get(key)
    if body is None:
        body = ENCODINGS[encoding](make().encode())
        cache.set(key, body, COMPRESSED_FOR_S)
    response = download(body, filename=filename, content_type=content_type)
    if encoding != "identity":
        response["Content-Encoding"] = encoding
    patch_vary_headers(response, ("Accept-Encoding",))
    return response


def streaming_download(pieces: Iterable[bytes], *, filename: str, content_type: str = "application/zip"):
    """A download written as it is read (a zip of runs or a task bundle): no length is known
    beforehand, and nothing may cache it.

    Whole or visibly failed (DESIGN.md, "Downloads"): its first piece is written before the
    response starts, so that what fails in putting the download together answers as an error,
    not as a file; an error after that is logged and ends the response before its end, which
    the server (gunicorn, or :mod:`leaderboard.embedded_server`) sends in chunks, so that the
    browser or ``curl`` reports a failed download rather than keeping a truncated file."""
    pieces = iter(pieces)
    first = next(pieces, b"")
    response = StreamingHttpResponse(_logged(first, pieces, filename), content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    response["Cache-Control"] = "private, no-store"
    return response


def _logged(first: bytes, rest: Iterator[bytes], filename: str) -> Iterator[bytes]:
    yield first
    try:
        yield from rest
    except Exception:
        logger.exception("the download %s failed after its first bytes: the response is cut short", filename)
        raise


def refusal(error: ValidationError) -> str:
    """Every message of a refusal, as one line for a flash message."""
    return " ".join(error.messages)
