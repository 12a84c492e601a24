"""A bundle's zip, checked as strictly as an upload before any file in it is read.

On opening, from the zip's central directory and without expanding anything: the archive's
size, its number of files, every path (relative, inside the bundle: no ``..``, no leading
``/``, no drive, no backslash, no control character), no symbolic link, no path twice, no
encrypted file, each file's size once expanded (at most an upload's), each file's expansion
ratio (above 1 MiB, at most ``BUNDLE_MAX_RATIO``: a zip bomb expands a thousand times, a CSV
of ids and labels less than twenty) and what all files come to once expanded. A file is then
read with at most the size its header declares plus one byte, so a header that lies is caught
too (as :mod:`zipfile` checks each file's CRC).

Folders and the litter of archivers (``__MACOSX/``, ``.DS_Store``, ``._*``, ``Thumbs.db``) are
passed over. A zip inside the bundle (CodaLab's reference data) is opened with the same checks.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.conf import settings

from leaderboard import errors

FORM_FIELD = "bundle"
RATIO_FLOOR_BYTES = 1024 * 1024
"""Files smaller than this once expanded are not held to the ratio: a small file of blanks
expands a thousand times and harms nothing."""
DRIVE = re.compile(r"^[A-Za-z]:")
LITTER_FOLDERS = ("__MACOSX",)
LITTER_NAMES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


@dataclass(frozen=True)
class ZipLimits:
    max_bytes: int
    max_files: int
    max_expanded: int
    max_file: int
    max_ratio: int

    @classmethod
    def from_settings(cls) -> ZipLimits:
        return cls(
            max_bytes=settings.BUNDLE_MAX_BYTES,
            max_files=settings.BUNDLE_MAX_FILES,
            max_expanded=settings.BUNDLE_MAX_EXPANDED_BYTES,
            max_file=settings.MAX_UPLOAD_BYTES,
            max_ratio=settings.BUNDLE_MAX_RATIO,
        )


def path_problem(path: str) -> str | None:
    """Why ``path`` may not be in a bundle, or ``None``."""
    if "\\" in path:
        return "holds a backslash"
    if any(not ch.isprintable() for ch in path):
        return "holds a control character"
    if path.startswith("/"):
        return "is absolute"
    if DRIVE.match(path):
        return "names a drive"
    parts = path.rstrip("/").split("/")
    if ".." in parts:
        return "climbs out of the bundle with '..'"
    if any(part == "" for part in parts):
        return "has an empty folder name"
    return None


def is_litter(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(part in LITTER_FOLDERS for part in parts) or parts[-1] in LITTER_NAMES or parts[-1].startswith("._")


def is_link(info: zipfile.ZipInfo) -> bool:
    """A Unix symbolic link (its mode in the high bits of the external attributes)."""
    return stat.S_ISLNK(info.external_attr >> 16)


class SafeZip:
    """A bundle's zip whose every file passed the checks of the module; ``files`` maps each
    path (``./`` parts dropped) to its entry."""

    def __init__(self, content: bytes, *, name: str, limits: ZipLimits | None = None) -> None:
        self.name = name
        self.limits = limits or ZipLimits.from_settings()
        if len(content) > self.limits.max_bytes:
            raise errors.BUNDLE_TOO_LARGE.error(FORM_FIELD, size=len(content), limit=self.limits.max_bytes)
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(content))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as error:
            raise errors.BUNDLE_NOT_ZIP.error(FORM_FIELD, file=name, details=str(error) or "unreadable") from None
        self.files: dict[str, zipfile.ZipInfo] = {}
        self.ignored: list[str] = []
        self.root = ""
        """The folder every path is read from (where the bundle's manifest is)."""
        self._check(self.archive.infolist())

    def _refuse(self, problem: errors.Problem, **params: object):
        return problem.error(FORM_FIELD, file=self.name, **params)

    def _check(self, infos: list[zipfile.ZipInfo]) -> None:
        if len(infos) > self.limits.max_files:
            raise self._refuse(errors.BUNDLE_TOO_MANY_FILES, count=len(infos), limit=self.limits.max_files)
        expanded = 0
        for info in infos:
            path = info.filename
            why = path_problem(path)
            if why is not None:
                raise self._refuse(errors.BUNDLE_UNSAFE_PATH, path=path, why=why)
            if is_link(info):
                raise self._refuse(errors.BUNDLE_LINK, path=path)
            if info.is_dir():
                continue
            if info.flag_bits & 0x1:
                raise self._refuse(errors.BUNDLE_ENTRY_DAMAGED, path=path, details="it is encrypted")
            clean = "/".join(part for part in path.split("/") if part != ".")
            if clean in self.files:
                raise self._refuse(errors.BUNDLE_DUPLICATE, path=path)
            if info.file_size > self.limits.max_file:
                raise self._refuse(
                    errors.BUNDLE_ENTRY_TOO_LARGE, path=path, size=info.file_size, limit=self.limits.max_file
                )
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > RATIO_FLOOR_BYTES and ratio > self.limits.max_ratio:
                raise self._refuse(
                    errors.BUNDLE_RATIO,
                    path=path,
                    ratio=ratio,
                    size=info.file_size,
                    compressed=info.compress_size,
                    limit=self.limits.max_ratio,
                )
            expanded += info.file_size
            if expanded > self.limits.max_expanded:
                raise self._refuse(errors.BUNDLE_EXPANDED_TOO_LARGE, size=expanded, limit=self.limits.max_expanded)
            if is_litter(clean):
                self.ignored.append(clean)
                continue
            self.files[clean] = info

    def _full(self, path: str) -> str:
        path = "/".join(part for part in path.strip().split("/") if part not in ("", "."))
        return "/".join(part for part in (self.root, path) if part)

    def has(self, path: str) -> bool:
        return self._full(path) in self.files

    def under(self, folder: str) -> list[str]:
        """The files in ``folder`` and its subfolders, by path (from :attr:`root`)."""
        full = self._full(folder)
        prefix = f"{full}/" if full else ""
        skip = len(self.root) + 1 if self.root else 0
        return sorted(path[skip:] for path in self.files if path.startswith(prefix))

    def read(self, path: str) -> bytes:
        """A file's bytes, read with at most its declared size plus one byte."""
        info = self.files[self._full(path)]
        try:
            with self.archive.open(info) as stream:
                content = stream.read(info.file_size + 1)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, OSError) as error:
            raise self._refuse(errors.BUNDLE_ENTRY_DAMAGED, path=path, details=str(error) or "unreadable") from None
        if len(content) != info.file_size:
            raise self._refuse(
                errors.BUNDLE_ENTRY_DAMAGED,
                path=path,
                details=f"it expands to more than the {info.file_size:,} bytes its header declares",
            )
        return content

    def nested(self, path: str) -> SafeZip:
        """A zip inside the bundle, opened with the same checks."""
        return SafeZip(self.read(path), name=f"{self.name}/{path}", limits=self.limits)

    def top_folder(self) -> str:
        """The one folder every file is in, if there is one (an archiver's "compress the
        folder"), else ``""``."""
        tops = {path.split("/", 1)[0] if "/" in path else "" for path in self.files}
        return tops.pop() if len(tops) == 1 else ""
