"""A database that cannot be reached is a 503 that says so, never a 500.

When PostgreSQL restarts or drops its connections, the requests that were using one fail (the
next ones get a new connection: ``CONN_HEALTH_CHECKS``). Their transaction is rolled back, so
nothing half-written stays; the person is told to try again, with ``Retry-After``, on the page
(:class:`DatabaseUnavailableMiddleware`) and in the API (its exception handler).
"""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

DATABASE_ERRORS = (OperationalError, InterfaceError)
RETRY_AFTER_S = 5
MESSAGE = (
    "The site cannot reach its database for a moment, so nothing was done (an upload was not stored). "
    f"Please try again in {RETRY_AFTER_S} seconds."
)


def unavailable(response: HttpResponse) -> HttpResponse:
    response.status_code = 503
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, DATABASE_ERRORS):
            return None
        logger.warning("database unavailable on %s %s: %s", request.method, request.path, exception)
        return unavailable(HttpResponse(render_to_string("503.html", {"message": MESSAGE})))
