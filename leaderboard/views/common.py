"""What the view modules share: finding a task, checking its organiser, a file download, and a
refusal in words."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
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
