"""A zip archive written as a stream of bytes, entry after entry, with the standard library.

:mod:`zipfile` writing to a stream it cannot seek (:class:`_Sink`) marks each entry's sizes
and CRC as following its data (a *data descriptor*, general-purpose bit 3) instead of seeking
back to fill them in, so each entry goes out as soon as it is compressed: what is held at any
moment is one entry's bytes and the compressed output not yet handed on, whatever the number
of entries. Any unzip tool, Python's, Windows' and macOS' included, reads such archives.
ZIP64 records are written where an entry or the archive needs them: a file's size is known
before it is written, so :mod:`zipfile` decides per entry; an entry written in pieces of
unknown total (an index) must stay under 4 GiB.

No third-party streaming-zip library is needed for this: the standard library's writer does it,
and is as well kept as Python.
"""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

CHUNK_BYTES = 256 * 1024
"""What is handed on at a time: compressed output is given to the response once this much has
accumulated (and at the end of every entry)."""
ZIP_EPOCH = dt.datetime(1980, 1, 1, tzinfo=dt.UTC)
"""A zip entry's time cannot be earlier (MS-DOS dates)."""
FILE_MODE = 0o644


@dataclass(frozen=True)
class ZipEntry:
    """One file of an archive: its path inside it (``/``-separated), its bytes (or pieces of
    them, read as they are written: an index of any length), and when it was last changed (UTC;
    shown by unzip tools)."""

    path: str
    content: bytes | Iterable[bytes]
    modified: dt.datetime | None = None


class _Sink:
    """A file that can only be written: keeps what :mod:`zipfile` writes until it is taken.
    It has no ``tell`` and no ``seek``, so :mod:`zipfile` writes data descriptors."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self.held = 0

    def write(self, data) -> int:
        piece = bytes(data)
        self._parts.append(piece)
        self.held += len(piece)
        return len(piece)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        self.held = 0
        return data


def _date_time(moment: dt.datetime | None) -> tuple[int, int, int, int, int, int]:
    moment = max((moment or ZIP_EPOCH).astimezone(dt.UTC), ZIP_EPOCH)
    return (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)


def _pieces(content: bytes | Iterable[bytes], size: int) -> Iterable[bytes | memoryview]:
    if not isinstance(content, bytes):
        return content
    view = memoryview(content)
    return (view[start : start + size] for start in range(0, len(view), size))


def zip_stream(entries: Iterable[ZipEntry], *, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The zip archive of ``entries`` (deflated), as pieces of bytes to send one after the
    other. ``entries`` is read lazily: each entry's bytes are let go once it is written."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for entry in entries:
            info = zipfile.ZipInfo(entry.path, date_time=_date_time(entry.modified))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | FILE_MODE) << 16  # a regular file, rw-r--r--
            pieces = _pieces(entry.content, chunk_bytes)
            if isinstance(entry.content, bytes):
                info.file_size = len(entry.content)  # zipfile then writes ZIP64 fields only if they are needed
            with archive.open(info, "w") as out:
                for piece in pieces:
                    out.write(piece)
                    if sink.held >= chunk_bytes:
                        yield sink.take()
            if sink.held:
                yield sink.take()
    if sink.held:
        yield sink.take()


def zip_bytes(entries: Iterable[ZipEntry]) -> bytes:
    """The whole archive at once (small archives, tests)."""
    return b"".join(zip_stream(entries))
