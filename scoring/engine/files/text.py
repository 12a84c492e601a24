"""A file's bytes: read or mapped into memory, checked as UTF-8 text, and its lines found.

A large plain file (ASCII, no byte-order mark, ending in one line end) is mapped rather than
read: its bytes are then the page cache's own, where reading them would copy them. Any other
file is read and checked (:func:`decode_check`), whose messages name what is wrong.
"""

from __future__ import annotations

import mmap
import os
import re
from pathlib import Path

import numpy as np

from scoring.engine.files.messages import EMPTY_FILE, HEADER_LINE, UNDECODABLE, UTF16, InputFileError


def read_bytes(source: bytes | str | Path) -> tuple[bytes, str]:
    """The raw bytes of ``source`` and a name to use in messages."""
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    return data, default_name(source)


def default_name(source: bytes | str | Path) -> str:
    return "<upload>" if isinstance(source, bytes) else str(Path(source))


_LEADING_SPACE = re.compile(rb"[ \t\v\f\r\n]*")


def header_start(data: bytes) -> int:
    """Where the first line with text begins: after any blank lines (spaces at most)."""
    text = _LEADING_SPACE.match(data).end()
    return max(data.rfind(b"\n", 0, text), data.rfind(b"\r", 0, text)) + 1


def line_end(data: bytes) -> int:
    """Where the first line ends, found at C speed: at its first LF or CR (pandas ends a line at
    CRLF, LF or a lone CR, as old Mac files do)."""
    newline = data.find(b"\n")
    end = len(data) if newline < 0 else newline
    carriage_return = data.find(b"\r", 0, end)
    return end if carriage_return < 0 else carriage_return


def lines_before(data: bytes, offset: int) -> int:
    """How many line ends (CRLF, CR or LF) come before ``offset``, counted at C speed."""
    return data.count(b"\n", 0, offset) + data.count(b"\r", 0, offset) - data.count(b"\r\n", 0, offset)


def line_text(source: bytes, index: int) -> bytes | None:
    """Line ``index`` (from 0) of ``source`` without its line end; ``None`` past the end.

    The line ends are found with numpy, so the millionth line costs no more than the first.
    """
    text = np.frombuffer(source, dtype=np.uint8)
    if b"\r" not in source:  # the usual case: one temporary array of the file's length
        ends = np.flatnonzero(text == ord("\n"))
    else:
        newline, carriage_return = text == ord("\n"), text == ord("\r")
        carriage_return[:-1] &= ~newline[1:]  # a CR followed by LF is part of a CRLF
        ends = np.flatnonzero(newline | carriage_return)
    if index > len(ends):
        return None
    start = int(ends[index - 1]) + 1 if index else 0
    stop = int(ends[index]) if index < len(ends) else len(source)
    line = source[start:stop]
    return line[:-1] if line.endswith(b"\r") else line


def _looks_like_utf16(data: bytes) -> bool:
    """UTF-16 without a byte-order mark: the header starts with ASCII ("id"), which UTF-16
    writes as a character and a zero byte, in one order or the other; UTF-8 text has no
    zero bytes."""
    start = data[:4]
    return len(start) == 4 and (start[1] == start[3] == 0) != (start[0] == start[2] == 0)


def decode_check(data: bytes, name: str) -> bytes:
    if not data or data.isspace():  # stops at the first other byte: no stripped copy of the file
        raise InputFileError(EMPTY_FILE, file=name)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or _looks_like_utf16(data):
        raise InputFileError(UTF16, file=name, line=HEADER_LINE)
    bom = len(b"\xef\xbb\xbf") if data.startswith(b"\xef\xbb\xbf") else 0
    data = data[bom:]
    try:
        if not data.isascii():  # ASCII, the usual case, is UTF-8: no decoded copy of the file
            data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = lines_before(data, error.start) + 1
        # The offset is the file's, counted with the byte-order mark the user sees in a hex editor.
        raise InputFileError(UNDECODABLE, file=name, line=line, offset=error.start + bom) from None
    # Blank lines at the very end are an editor's habit, not a missing record.
    if data.endswith(b"\n") and not data.endswith((b"\n\n", b"\n\r\n", b"\r\r\n")):
        return data  # the usual ending: no copy of a large file
    return data.rstrip(b"\r\n") + b"\n"


MAP_FROM_BYTES = 1 << 24
"""Files at least this large are mapped into memory rather than read, when they are plain."""


def mapped_plain(origin: bytes | str | Path, *, max_rows: int | None) -> mmap.mmap | None:
    """A large file mapped into memory, when it is plain: ASCII, no byte-order mark, text on its
    first line, ending in one line end. Mapped, its bytes are the page cache's own, where
    reading them would copy them (a tenth of a second for 200 MB); any other file is read and
    checked by :func:`decode_check`, whose messages name what is wrong. (``max_rows`` asks
    for a count of lines, which a read file gives.)"""
    if isinstance(origin, bytes) or max_rows is not None:
        return None
    with open(origin, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < MAP_FROM_BYTES or size == 0:
            return None
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    plain = (
        not mapped[:1].isspace()
        and not mapped[:3].startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"))
        and not _looks_like_utf16(mapped[:4])
        and mapped[-1:] == b"\n"
        and not mapped[-3:].endswith((b"\n\n", b"\n\r\n", b"\r\r\n"))
        and int(np.frombuffer(mapped, dtype=np.uint8).max()) < 0x80
    )
    if plain:
        return mapped
    mapped.close()
    return None
