"""Checking uploaded files before anything is stored: size, format, labels, ids.

The engine (:mod:`scoring.engine.io`) reads and validates; this module turns its named,
line-precise problems into ``ValidationError``\\ s keyed by the form field that took the file
(``gold`` for a gold file, ``file`` for predictions), so a page shows them beside it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import PurePath

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError

from leaderboard import errors
from leaderboard.models import FILE_NAME_MAX_LENGTH, Phase, StoredFile, Submission
from scoring.engine.io import InputFileError, LabelFile, read_labels, read_predictions
from scoring.engine.outputs import OutputsFile, read_output_predictions, read_outputs
from scoring.engine.schemes import Output, Scheme

GOLD_FIELD = "gold"
PREDICTIONS_FIELD = "file"
LABELS_FIELD = "labels"


def file_error(error: InputFileError, field: str) -> ValidationError:
    """An engine file problem as a form error; its code is the problem's stable code
    (``UNKNOWN_ID``: the name of its message's constant in ``scoring.engine.io``)."""
    return ValidationError({field: ValidationError(str(error), code=error.code)})


def safe_file_name(name: str) -> str:
    """A display name for an uploaded file: its base name only, without path tricks.

    Unprintable characters (NUL, bidi overrides) go first, so that none can hide a separator
    or leave ``..`` behind; a name that is only a directory reference becomes "upload".
    """
    printable = "".join(ch for ch in name if ch.isprintable())
    base = PurePath(printable.replace("\\", "/")).name.strip()
    return base[:FILE_NAME_MAX_LENGTH] if base not in {"", ".", ".."} else "upload"


def check_size(content: bytes, *, field: str) -> None:
    if len(content) > settings.MAX_UPLOAD_BYTES:
        raise errors.FILE_TOO_LARGE.error(field, size=len(content), limit=settings.MAX_UPLOAD_BYTES)


def clean_labels(labels: list[str]) -> list[str]:
    """The label set without blanks and surrounding spaces; at least two, none twice."""
    labels = [label.strip() for label in labels if label.strip()]
    if len(labels) < 2:
        raise errors.TOO_FEW_LABELS.error(LABELS_FIELD)
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise errors.DUPLICATE_LABEL.error(LABELS_FIELD, label=label)
        seen.add(label)
    return labels


Gold = LabelFile | OutputsFile
"""A gold file read: one label column, or (a task of several outputs) one column per output."""


def read_gold(content: bytes, *, scheme: Scheme, name: str = "gold file") -> Gold:
    """A gold file of the task's kind, read (an :class:`InputFileError` on a bad one)."""
    if scheme.has_outputs:
        return read_outputs(content, outputs=scheme.outputs, name=name, max_rows=settings.MAX_FILE_ROWS)
    return read_labels(content, labels=scheme.labels, name=name, max_rows=settings.MAX_FILE_ROWS)


def clean_outputs(outputs: Sequence[Output]) -> tuple[Output, ...]:
    """A task's outputs: at least two, each with at least two labels, none twice."""
    if len(outputs) < 2:
        raise errors.TOO_FEW_OUTPUTS.error(GOLD_FIELD, found=len(outputs))
    for output in outputs:
        if len(output.labels) < 2 or len(set(output.labels)) != len(output.labels):
            raise errors.BAD_OUTPUT_LABELS.error(LABELS_FIELD, output=output.name, labels=", ".join(output.labels))
    return tuple(outputs)


def outputs_of_gold(*, content: bytes | None, given: Mapping[str, Sequence[str]]) -> tuple[Output, ...]:
    """A new task's outputs: the gold file's output columns, each with the labels ``given`` for
    it (by name) or read from its column (:func:`scoring.engine.outputs.read_outputs`); without a
    gold file yet, those given."""
    if content is None:
        return tuple(Output(name, tuple(labels)) for name, labels in given.items())
    check_size(content, field=GOLD_FIELD)
    try:
        outputs = read_outputs(content, labels=given, name="gold file", max_rows=settings.MAX_FILE_ROWS).outputs
    except InputFileError as error:
        raise file_error(error, GOLD_FIELD) from None
    names = [output.name for output in outputs]
    for name in given:
        if name not in names:
            raise errors.UNKNOWN_OUTPUT.error(LABELS_FIELD, output=name, outputs=", ".join(names))
    return outputs


def parse_gold(*, content: bytes, scheme: Scheme, name: str = "gold file") -> Gold:
    """Validate a gold file as strictly as predictions, and require every label of a label
    column to occur (a label of a multi-label task may be present in no item)."""
    check_size(content, field=GOLD_FIELD)
    try:
        gold = read_gold(content, scheme=scheme, name=name)
    except InputFileError as error:
        raise file_error(error, GOLD_FIELD) from None
    if scheme.has_outputs:
        return gold
    counts = np.bincount(gold.codes, minlength=len(scheme.labels))
    for label, count in zip(scheme.labels, counts, strict=True):
        if count == 0:
            raise errors.GOLD_LABEL_UNUSED.error(GOLD_FIELD, label=label)
    return gold


def gold_bytes(phase: Phase) -> bytes:
    """The phase's current gold file, exactly as uploaded."""
    return bytes(StoredFile.objects.values_list("content", flat=True).get(pk=phase.gold_file_id))


def submission_bytes(submission: Submission) -> bytes:
    """A submission's file, exactly as uploaded."""
    return bytes(StoredFile.objects.values_list("content", flat=True).get(pk=submission.file_id))


def stored_gold(phase: Phase) -> Gold:
    """The phase's current gold file, read (it was validated when it was stored)."""
    return read_gold(gold_bytes(phase), scheme=phase.task.scheme)


GOLD_KEPT_MAX_ITEMS = 1_000_000
"""Gold files up to this many items stay parsed in each web process (a few MB at most)."""
GOLD_KEPT_FILES = 4
_kept_gold: dict[tuple[str, Scheme], Gold] = {}
_kept_gold_lock = threading.Lock()


def kept_gold(phase: Phase) -> Gold:
    """:func:`stored_gold`, kept parsed in this process under the file's SHA-256 and the task's
    kind (labels or outputs): an upload then costs its web thread the reading of the uploaded file alone, not of
    the gold file as well (in a deadline rush, every upload of a 12,284-line task read it again);
    the sample submissions, the what-if page's class counts and the bootstrap read it here too.
    The last :data:`GOLD_KEPT_FILES` gold files of at most :data:`GOLD_KEPT_MAX_ITEMS` items are
    kept; their digest is read on every call, so a replaced gold file is never mistaken for
    the old one."""
    digest = StoredFile.objects.values_list("sha256", flat=True).get(pk=phase.gold_file_id)
    key = (digest, phase.task.scheme)
    gold = _kept_gold.get(key)
    if gold is None:
        gold = stored_gold(phase)
        if gold.n_items <= GOLD_KEPT_MAX_ITEMS:
            with _kept_gold_lock:
                _kept_gold[key] = gold
                while len(_kept_gold) > GOLD_KEPT_FILES:
                    del _kept_gold[next(iter(_kept_gold))]
    return gold


def prediction_kind(*, gold: Gold, name: str, content: bytes) -> str:
    """Check an uploaded prediction file against its phase's gold file (:func:`kept_gold`);
    returns its kind."""
    check_size(content, field=PREDICTIONS_FIELD)
    try:
        if isinstance(gold, OutputsFile):  # labels, one column per output
            read_output_predictions(content, gold=gold, name=name, max_rows=settings.MAX_FILE_ROWS)
            return Submission.Kind.HARD
        predictions = read_predictions(content, gold=gold, name=name, max_rows=settings.MAX_FILE_ROWS)
    except InputFileError as error:
        raise file_error(error, PREDICTIONS_FIELD) from None
    return Submission.Kind.SOFT if predictions.is_soft else Submission.Kind.HARD
