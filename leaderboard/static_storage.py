"""Static files as ``collectstatic`` leaves them: whitenoise's storage, which writes each file
under a name holding its content's hash with a Brotli and a gzip copy beside it, but compresses a
file once: a second ``collectstatic`` (``make demo`` started again) finds the copies of an
unchanged file beside it and keeps them, instead of spending half a minute of Brotli on
plotly.js again."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import brotli
from whitenoise.storage import CompressedManifestStaticFilesStorage

COPIES = {".br": brotli.decompress, ".gz": gzip.decompress}


class CompressedOnceStorage(CompressedManifestStaticFilesStorage):
    def compress_files(self, paths: Iterable[str]) -> Iterator[tuple[str, str]]:
        yield from super().compress_files([path for path in paths if not self._compressed(path)])

    def _compressed(self, path: str) -> bool:
        """Both copies are there and give the file's bytes (a copy cut short by a stopped
        ``collectstatic``, or of other bytes, is written again)."""
        full = Path(self.path(path))
        content = full.read_bytes()
        try:
            return all(
                decompress(full.with_name(full.name + copy).read_bytes()) == content
                for copy, decompress in COPIES.items()
            )
        except (OSError, brotli.error, gzip.BadGzipFile, zlib.error, EOFError):
            return False
