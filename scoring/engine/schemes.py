"""What a task scores, and so which columns its boards have: one label column (its labels, maybe an
ordered scale), or several *outputs*, each with labels of its own (:mod:`scoring.engine.outputs`).

Everything that depends on the kind of task and not on a run (the ranking columns, the heatmap's,
the named sets an overall ranking is taken over, the width of a run's packed confusion matrix)
asks the task's :class:`Scheme`, so that a board, its pages and its exports are written once for
both kinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from scoring.engine.aggregate import Aggregate, column_sets
from scoring.engine.columns import (
    Column,
    column_by_id,
    output_columns,
    output_paired_columns,
    paired_columns,
    ranking_columns,
)
from scoring.engine.registry import ChanceBaseline

UNKNOWN_COLUMN = "unknown column {column!r}; known columns: {known}"


class BoardError(ValueError):
    """A board that cannot be built as asked: ``template`` is one of the named messages."""

    def __init__(self, template: str, **params: object) -> None:
        self.template = template
        self.params = params
        super().__init__(template.format(**params))


def choose_columns(text: str, available: Sequence[Column]) -> list[Column]:
    """The columns named by ``text``, comma-separated column ids (``macro_recall,kappa_c,
    recall[neutral]``), in that order.

    Ids are looked up, never parsed: at each position the longest id of ``available`` that
    the text continues with (up to a comma or the end) is taken, so a label may hold a comma.
    Spaces after a comma are ignored. An unknown id raises :class:`BoardError`
    (:data:`UNKNOWN_COLUMN`).
    """
    ids = [column.id for column in available]
    chosen: list[Column] = []
    rest = text
    while rest:
        if not any(rest == i or rest.startswith(i + ",") for i in ids):
            rest = rest.lstrip()
        match = max((i for i in ids if rest == i or rest.startswith(i + ",")), key=len, default=None)
        if match is None:
            raise BoardError(UNKNOWN_COLUMN, column=rest.split(",")[0], known=", ".join(ids))
        chosen.append(column_by_id(available, match))
        rest = rest[len(match) + 1 :]
    return chosen


BOARD_SETS = ("table8", "raw", "calibrated")
"""The named sets of columns (:func:`~scoring.engine.aggregate.column_sets`) an overall column
of a board may be taken over; the primary metric alone would repeat its own ranks."""


LABEL_VALUES = ("0", "1")
"""The labels of an output that is a label of a multi-label task: absent, present."""


@dataclass(frozen=True)
class Output:
    """One output of a task with several: its column's name and its labels, in order."""

    name: str
    labels: tuple[str, ...]

    @property
    def is_label(self) -> bool:
        """Whether the output is a 0/1 label of a multi-label task."""
        return self.labels == LABEL_VALUES

    def as_json(self) -> dict:
        return {"name": self.name, "labels": list(self.labels)}

    @classmethod
    def of(cls, stored: dict) -> Output:
        return cls(stored["name"], tuple(stored["labels"]))


def outputs_are_labels(outputs: Sequence[Output]) -> bool:
    """Whether every output is a 0/1 label: the task is multi-label (the label-set metrics)."""
    return bool(outputs) and all(output.is_label for output in outputs)


@dataclass(frozen=True)
class Scheme:
    """A task's kind: ``labels`` (and ``ordinal``) of its one label column, or its ``outputs``."""

    labels: tuple[str, ...] = ()
    ordinal: bool = False
    outputs: tuple[Output, ...] = ()

    @property
    def has_outputs(self) -> bool:
        return bool(self.outputs)

    @property
    def multi_label(self) -> bool:
        """Several outputs, every one a 0/1 label."""
        return outputs_are_labels(self.outputs)

    @property
    def default_overall_set(self) -> str:
        """The set an overall ranking is taken over when the organisers name none: Table 8's
        metrics for one label column, every raw column for several outputs."""
        return "raw" if self.outputs else "table8"

    @property
    def matrix_size(self) -> int:
        """The side of a run's confusion matrix as a board packs it (a task of several outputs
        keeps each output's matrix with the run's scores, none on the board)."""
        return 0 if self.outputs else len(self.labels)

    def chance(self, baseline: ChanceBaseline | None) -> float | None:
        """A metric's chance baseline c(n) on this task: of its n classes, or the mean over its
        outputs of c(n) of each output's labels (the metric being their mean)."""
        if baseline is None:
            return None
        if self.outputs:
            values = [Fraction(baseline.value(len(output.labels))) for output in self.outputs]
            return float(sum(values) / len(values))
        return baseline.value(len(self.labels))

    def ranking_columns(self, *, calibrated: bool | None = False) -> list[Column]:
        if self.outputs:
            return output_columns(labels=self.multi_label, calibrated=calibrated)
        return ranking_columns(self.labels, calibrated=calibrated, ordinal=self.ordinal)

    def paired_columns(self, *, paper_set: bool = False) -> list[Column]:
        """The heatmap's columns: each column followed by its calibrated twin (paper 000's set
        alone, ``paper_set``, for one label column)."""
        if self.outputs:
            return output_paired_columns(labels=self.multi_label)
        return paired_columns(self.labels, paper_set=paper_set, ordinal=self.ordinal)

    def column_sets(self, *, primary: str) -> dict[str, list[Column]]:
        """The named sets of columns an overall ranking is taken over (Table 8's needs one label
        column's classes)."""
        if self.outputs:
            return {
                "raw": self.ranking_columns(calibrated=False),
                "calibrated": self.ranking_columns(calibrated=True),
                "primary": [Column(primary)],
            }
        return column_sets(self.labels, primary=primary, ordinal=self.ordinal)

    def overall(self, method: str, over: str, *, primary: str) -> Aggregate:
        """The overall ranking ``method`` over ``over``: a named set (:data:`BOARD_SETS`, those the
        task has) or column ids separated by commas, each counted once. Raises
        :class:`BoardError` for an unknown column and
        :class:`~scoring.engine.aggregate.AggregateError` for an unknown method or no column."""
        over = over.strip()
        sets = self.column_sets(primary=primary)
        if over in BOARD_SETS and over in sets:
            columns = sets[over]
        else:
            columns = choose_columns(over, self.ranking_columns(calibrated=None))
        return Aggregate(method, tuple(dict.fromkeys(columns)))
