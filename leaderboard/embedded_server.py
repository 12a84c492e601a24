"""The web server of the embedded set-up (``manage.py runserver``, as ``make demo`` runs it):
Django's development server, but a body whose length is not known beforehand (a zip of runs, a
task bundle: written as they are read) goes out in HTTP/1.1 chunks rather than until the
connection closes.

That is what makes a failed download visible. A response without a length ends when its
connection closes, so a download whose writing failed half way would end like a whole file, and
the browser or ``curl`` would keep a truncated zip as a success. In chunks, a whole body ends
with a last, empty chunk; one that fails ends without it, and every HTTP client reports the
download as failed. gunicorn, the server of the scaled set-up, frames such bodies in chunks
itself.
"""

from __future__ import annotations

from django.core.servers import basehttp

LAST_CHUNK = b"0\r\n\r\n"


class ChunkedServerHandler(basehttp.ServerHandler):
    """Django's handler of one request, sending a body of unknown length in chunks to an
    HTTP/1.1 client (an HTTP/1.0 client, which cannot read chunks, gets it until the close)."""

    chunked = False

    def cleanup_headers(self) -> None:
        super().cleanup_headers()
        no_body = self.environ["REQUEST_METHOD"] == "HEAD" or self.status[:3] in ("204", "304")
        if "Content-Length" not in self.headers and self.environ.get("SERVER_PROTOCOL") == "HTTP/1.1" and not no_body:
            self.headers["Transfer-Encoding"] = "chunked"
            self.chunked = True

    def write(self, data: bytes) -> None:
        if not self.headers_sent:
            super().write(b"")  # the headers first: they decide whether the body is chunked
        if not self.chunked:
            super().write(data)
        elif data:  # an empty chunk would end the body
            super().write(b"%X\r\n%s\r\n" % (len(data), data))

    def finish_content(self) -> None:
        """Reached only when the whole body has been written (an error skips it, so a chunked
        body that failed lacks its last chunk)."""
        if self.chunked:
            self._write(LAST_CHUNK)
            self._flush()
        else:
            super().finish_content()


class ChunkedRequestHandler(basehttp.WSGIRequestHandler):
    """Django's request handler, with :class:`ChunkedServerHandler` for each request."""

    def handle_one_request(self) -> None:
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.requestline, self.request_version, self.command = "", "", ""
            self.send_error(414)
            return
        if not self.parse_request():  # the error is sent
            return
        handler = ChunkedServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ())
        handler.request_handler = self  # for its log and for closing the connection
        handler.run(self.server.get_app())


class EmbeddedServer(basehttp.WSGIServer):
    """Django's development server with :class:`ChunkedRequestHandler` (``runserver`` gives
    it its own request handler class; this one takes ours instead)."""

    def __init__(self, server_address, request_handler_class=None, *args, **kwargs) -> None:
        super().__init__(server_address, ChunkedRequestHandler, *args, **kwargs)
