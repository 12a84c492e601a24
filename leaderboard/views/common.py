"""What the view modules share: finding a task, checking its organiser, a file download, and a
refusal in words."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header

from leaderboard import errors
from leaderboard.models import Task


def task_or_404(slug: str) -> Task:
    """The task at ``slug`` with its phases, or a 404."""
    return get_object_or_404(Task.objects.prefetch_related("phases"), slug=slug)


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


def refusal(error: ValidationError) -> str:
    """Every message of a refusal, as one line for a flash message."""
    return " ".join(error.messages)
