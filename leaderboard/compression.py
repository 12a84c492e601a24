"""Responses compressed for browsers that accept it, but for those already compressed."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase
from django.middleware.gzip import GZipMiddleware

ALREADY_COMPRESSED = ("application/zip", "image/png")
"""Content types whose bodies are compressed already (archives' entries are deflated): gzip would
spend a core's time on them for a few bytes, on the largest downloads the site serves."""


class CompressingMiddleware(GZipMiddleware):
    """Django's ``GZipMiddleware`` (with its mitigation of BREACH), for every response but those
    of :data:`ALREADY_COMPRESSED` types."""

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if response.get("Content-Type", "").startswith(ALREADY_COMPRESSED):
            return response
        return super().process_response(request, response)
