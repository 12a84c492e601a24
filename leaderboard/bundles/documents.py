"""A bundle's YAML, read safely, and its fields read with what each must be.

PyYAML's safe loader (its C implementation, libyaml, where the wheel has it) builds plain values
only: text, numbers, booleans, dates, lists and mappings. A Python tag (``!!python/object``)
is refused with its line, never run. Aliases build shared references, not copies, so a
"billion laughs" document stays small; the file itself is bounded (:data:`MAX_DOCUMENT_BYTES`).

A :class:`Field` is a value with the file and the path it came from
(``phases[1].opens_at``), so every refusal says which file, which field, what was expected
and what was found.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from leaderboard import errors
from leaderboard.bundles.zips import FORM_FIELD

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
"""A task.yaml lists every run of a task it carries (about 300 bytes each)."""
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MONTH_FIRST = re.compile(r"^(\d{1,2})[-/](\d{1,2})[-/](\d{4})$")
"""Codabench's examples write ``1-1-2026`` (month, day, year: what its date parser reads)."""
YEAR_FIRST = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
"""CodaLab's examples write ``2012-10-1`` too (a string to YAML, which reads only ``2012-10-01`` as a date)."""
TAG = re.compile(r"tag '([^']*)'")
YAML_TAG_PREFIX = "tag:yaml.org,2002:"


def load(content: bytes, *, file: str) -> Any:
    """The YAML document in ``content``, as plain values."""
    if len(content) > MAX_DOCUMENT_BYTES:
        raise errors.BUNDLE_ENTRY_TOO_LARGE.error(
            FORM_FIELD, file=file, path=file, size=len(content), limit=MAX_DOCUMENT_BYTES
        )
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise errors.BUNDLE_FIELD.error(
            FORM_FIELD, file=file, where="the file", expected="UTF-8 text", found=f"byte {error.start:,} is not UTF-8"
        ) from None
    try:
        return yaml.load(text, Loader=SafeLoader)
    except yaml.constructor.ConstructorError as error:
        mark = error.problem_mark
        found = TAG.search(error.problem or "")
        tag = found.group(1).replace(YAML_TAG_PREFIX, "!!") if found else "?"
        raise errors.BUNDLE_YAML_TAG.error(
            FORM_FIELD, file=file, line=mark.line + 1 if mark else "?", tag=tag
        ) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise errors.BUNDLE_YAML_SYNTAX.error(
            FORM_FIELD,
            file=file,
            line=mark.line + 1 if mark else "?",
            column=mark.column + 1 if mark else "?",
            details=getattr(error, "problem", None) or str(error),
        ) from None


def kind_of(value: Any) -> str:
    """What a value is, in words, for a refusal."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {value[:60]!r}"
    if isinstance(value, dt.datetime | dt.date):
        return f"the date {value.isoformat()}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def as_utc(moment: dt.datetime) -> dt.datetime:
    """A moment in UTC; a moment without a zone is taken as UTC (as CodaLab and Codabench do)."""
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def parse_moment(value: Any) -> dt.datetime | None:
    """A date or a date and time as YAML, ISO 8601 or Codabench write them, in UTC; ``None``
    if it is not one."""
    if isinstance(value, dt.datetime):
        return as_utc(value)
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time(), tzinfo=dt.UTC)
    if not isinstance(value, str):
        return None
    text = value.strip()
    for pattern, order in ((MONTH_FIRST, (2, 0, 1)), (YEAR_FIRST, (0, 1, 2))):
        found = pattern.match(text)
        if found:
            year, month, day = (int(found.group(position + 1)) for position in order)
            try:
                return dt.datetime(year, month, day, tzinfo=dt.UTC)
            except ValueError:
                return None
    try:
        return as_utc(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


MOMENT_EXPECTED = "a date (2026-01-31) or a date and time (2026-01-31T12:00:00Z), UTC unless a zone is given"


@dataclass(frozen=True)
class Field:
    """A value of a document, with where it came from."""

    file: str
    path: str
    value: Any

    def wrong(self, expected: str):
        return errors.BUNDLE_FIELD.error(
            FORM_FIELD, file=self.file, where=self.path or "the document", expected=expected, found=kind_of(self.value)
        )

    def missing(self, expected: str):
        return errors.BUNDLE_FIELD_MISSING.error(FORM_FIELD, file=self.file, where=self.path, expected=expected)

    def child(self, key: str | int) -> Field:
        path = f"{self.path}[{key}]" if isinstance(key, int) else (f"{self.path}.{key}" if self.path else str(key))
        value = self.value.get(key) if isinstance(self.value, Mapping) else None
        return Field(self.file, path, value)

    @property
    def present(self) -> bool:
        return self.value is not None

    def mapping(self, *, required: bool = True) -> Field:
        if self.value is None and not required:
            return Field(self.file, self.path, {})
        if self.value is None:
            raise self.missing("a mapping (key: value lines)")
        if not isinstance(self.value, Mapping):
            raise self.wrong("a mapping (key: value lines)")
        return self

    def items(self, *, required: bool = True) -> Iterator[Field]:
        """The elements of a list, each with its index in its path."""
        if self.value is None and not required:
            return
        if self.value is None:
            raise self.missing("a list")
        if not isinstance(self.value, list):
            raise self.wrong("a list")
        for index, value in enumerate(self.value):
            yield Field(self.file, f"{self.path}[{index}]", value)

    def text(self, *, required: bool = True, default: str = "", max_length: int | None = None) -> str:
        if self.value is None:
            if required:
                raise self.missing("a text")
            return default
        if isinstance(self.value, bool) or not isinstance(self.value, str | int | float):
            raise self.wrong("a text")
        text = str(self.value)
        if max_length is not None and len(text) > max_length:
            raise self.wrong(f"a text of at most {max_length:,} characters")
        return text

    def integer(self, *, required: bool = True, default: int = 0, minimum: int = 0, maximum: int | None = None) -> int:
        if self.value is None:
            if required:
                raise self.missing("a whole number")
            return default
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.wrong("a whole number")
        if self.value < minimum or (maximum is not None and self.value > maximum):
            bounds = f"from {minimum:,}" + (f" to {maximum:,}" if maximum is not None else "")
            raise self.wrong(f"a whole number {bounds}")
        return self.value

    def boolean(self, *, default: bool = False) -> bool:
        if self.value is None:
            return default
        if not isinstance(self.value, bool):
            raise self.wrong("true or false")
        return self.value

    def choice(self, choices: Mapping[str, str] | list[str], *, required: bool = True, default: str = "") -> str:
        text = self.text(required=required, default=default)
        if text not in choices:
            raise self.wrong("one of " + ", ".join(choices))
        return text

    def moment(self, *, required: bool = True) -> dt.datetime | None:
        if self.value is None:
            if required:
                raise self.missing(MOMENT_EXPECTED)
            return None
        moment = parse_moment(self.value)
        if moment is None:
            raise self.wrong(MOMENT_EXPECTED)
        return moment

    def strings(self) -> list[str]:
        return [item.text() for item in self.items()]
