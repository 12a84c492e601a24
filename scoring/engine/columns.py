"""Board columns: a metric of the registry, raw or prevalence-calibrated, for the whole task or
for one class.

A column is plain data (a registry key, a class label or ``None``, a calibrated flag), so it
pickles, caches and compares by value. Its :attr:`Column.id` names it in URLs, exports and
JSON (the metric key, ``measure[label]`` for a per-class column, ``_c`` appended when
calibrated, as paper 000's Figure 2 writes ``metric_c``); the id is built from the fields and
looked up among a task's columns, never parsed back, so any label works.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Protocol

from scoring.engine.metrics import Value
from scoring.engine.ranking import Direction
from scoring.engine.registry import BY_KEY, CLASS_MEASURE_BY_KEY, ClassMeasure, Metric, item_metrics, ranking_metrics

CALIBRATED_SUFFIX = "_c"

BOARD_CLASS_MEASURES: tuple[str, ...] = ("recall",)
"""The per-class measures that rank teams on a board, as Table 8 of paper 000 ranks them by
each class's recall."""

PAPER_SET_KEYS: tuple[str, ...] = ("macro_recall", "gmean_recall", "hmean_recall", "macro_f1", "kappa", "mcc")
"""The metrics of paper 000's Table 8 and Figure 2, in the paper's order; each class's recall
follows them."""


class Scores(Protocol):
    """What a column reads its value from: a report of the suite, or a stored scored row."""

    metrics: Mapping[str, Value] | None
    calibrated: Mapping[str, Value] | None
    per_class: Mapping[str, Mapping[str, Value]] | None
    calibrated_per_class: Mapping[str, Mapping[str, Value]] | None


@dataclass(frozen=True)
class Column:
    """A metric as a board column.

    ``key`` is a suite metric of the registry when ``label`` is ``None``, else a per-class
    measure (e.g. ``recall``) of the class ``label``.
    """

    key: str
    label: str | None = None
    calibrated: bool = False

    @property
    def metric(self) -> Metric | ClassMeasure:
        """The registry entry: name, formula, source, properties."""
        return BY_KEY[self.key] if self.label is None else CLASS_MEASURE_BY_KEY[self.key]

    @property
    def is_per_class(self) -> bool:
        return self.label is not None

    @property
    def direction(self) -> Direction:
        """Which values are better (the metric's, raw or calibrated alike)."""
        return self.metric.direction

    @cached_property
    def id(self) -> str:
        base = self.key if self.label is None else f"{self.key}[{self.label}]"
        return base + (CALIBRATED_SUFFIX if self.calibrated else "")

    @property
    def symbol(self) -> str:
        """A short name for headers and axes: ``macR``, ``R(neutral)``, ``κ_c``."""
        base = self.metric.symbol if self.label is None else f"{self.metric.symbol}({self.label})"
        return base + (CALIBRATED_SUFFIX if self.calibrated else "")

    @property
    def name(self) -> str:
        """The metric's full name (per-class columns name their class); no calibrated mark."""
        return self.metric.name if self.label is None else f"{self.metric.name} of class {self.label!r}"

    @property
    def formula_text(self) -> str:
        text = self.metric.formula_text
        return text if self.label is None else f"{text}, for class {self.label!r} against the rest"

    @property
    def description(self) -> str:
        if self.label is None:
            return self.metric.description
        return f"The {self.metric.name.lower()} of class {self.label!r} alone, against all the other classes."

    @property
    def score_fields(self) -> tuple[str, str]:
        """The scored row's fields this column reads: suite values, then per-class values."""
        return ("calibrated", "calibrated_per_class") if self.calibrated else ("metrics", "per_class")

    @property
    def prevalence_invariant(self) -> bool:
        """Whether the raw metric is prevalence invariant (property PIV of the registry): its
        calibrated value is then its raw one, wherever calibration is defined."""
        return self.metric.properties["PIV"].holds is True

    @property
    def has_twin(self) -> bool:
        """Whether the metric has a prevalence-calibrated twin: every metric of a confusion
        matrix; not those read from a run's items across several outputs."""
        return self.metric.scope == "matrix"

    def counterpart(self) -> Column:
        """The same metric on the other side of the raw/calibrated switch."""
        return replace(self, calibrated=not self.calibrated)

    def value(self, scores: Scores | None) -> Value:
        """This column's value in ``scores``; ``None`` when unscored or undefined."""
        if scores is None:
            return None
        suite_field, per_class_field = self.score_fields
        if self.label is None:
            return (getattr(scores, suite_field) or {}).get(self.key)
        per_class = getattr(scores, per_class_field) or {}
        return (per_class.get(self.label) or {}).get(self.key)


def score_fields(columns: Iterable[Column]) -> tuple[str, ...]:
    """Every scored-row field that ``columns`` read (and no other: never the matrix)."""
    fields: dict[str, None] = {}
    for column in columns:
        fields.update(dict.fromkeys(column.score_fields))
    return tuple(fields)


def ranking_columns(
    labels: Sequence[str],
    *,
    calibrated: bool | None = False,
    class_measures: Sequence[str] = BOARD_CLASS_MEASURES,
    ordinal: bool = False,
) -> list[Column]:
    """A task's ranking columns: every ranking metric of the suite (with the ordinal errors
    when the labels are an ordered scale, ``ordinal``), then each chosen per-class measure for
    each label. Raw ones (``calibrated=False``), calibrated ones (``True``), or (``None``) the raw
    ones followed by the calibrated ones."""
    flags = (False, True) if calibrated is None else (calibrated,)
    keys = [(metric.key, None) for metric in ranking_metrics(ordinal=ordinal)]
    keys += [(measure, label) for measure in class_measures for label in labels]
    return [Column(key, label, flag) for flag in flags for key, label in keys]


def output_columns(*, labels: bool, calibrated: bool | None = False) -> list[Column]:
    """The ranking columns of a task with several outputs: every ranking metric of the suite
    (each the mean over the outputs), raw (``calibrated=False``), calibrated (``True``) or both
    (``None``), then the metrics read from the items (:data:`~scoring.engine.registry.ITEM_METRICS`,
    with the label-set ones where every output is a 0/1 label, ``labels``), which have no
    calibrated twin and come with the raw ones."""
    flags = (False, True) if calibrated is None else (calibrated,)
    columns = [Column(metric.key, None, flag) for flag in flags for metric in ranking_metrics()]
    if calibrated is not True:
        columns += [Column(metric.key) for metric in item_metrics(labels=labels)]
    return columns


def output_paired_columns(*, labels: bool) -> list[Column]:
    """The heatmap of a task with several outputs: each mean of the suite followed by its
    calibrated twin, then the metrics read from the items."""
    twins = [column for base in output_columns(labels=labels) if base.has_twin for column in (base, base.counterpart())]
    return twins + [column for column in output_columns(labels=labels) if not column.has_twin]


def paired_columns(labels: Sequence[str], *, paper_set: bool = False, ordinal: bool = False) -> list[Column]:
    """Columns with each metric followed by its calibrated version, as Figure 2 pairs them.

    ``paper_set`` keeps the metrics of Figure 2 (:data:`PAPER_SET_KEYS`, then each class's
    recall); otherwise every ranking column (with the ordinal errors when ``ordinal``).
    """
    raw = ranking_columns(labels, calibrated=False, ordinal=ordinal)
    if paper_set:
        order = {key: index for index, key in enumerate(PAPER_SET_KEYS)}
        suite = sorted((c for c in raw if c.label is None and c.key in order), key=lambda c: order[c.key])
        raw = suite + [c for c in raw if c.label is not None]
    return [column for base in raw for column in (base, base.counterpart())]


TABLE8_CALIBRATED: tuple[str, ...] = ("macro_f1",)
"""The metrics that Table 8 of paper 000 also prints calibrated (its ``macF1c``)."""


def table8_columns(labels: Sequence[str]) -> list[Column]:
    """The columns of paper 000's Table 8: macro recall, its geometric and harmonic means,
    macro F1 raw and calibrated, kappa, MCC (:data:`PAPER_SET_KEYS`),
    then each class's recall."""
    columns = []
    for key in PAPER_SET_KEYS:
        columns.append(Column(key))
        if key in TABLE8_CALIBRATED:
            columns.append(Column(key, calibrated=True))
    return columns + [Column(measure, label) for measure in BOARD_CLASS_MEASURES for label in labels]


def column_by_id(columns: Iterable[Column], column_id: str) -> Column | None:
    """The column of ``columns`` whose id is ``column_id``, if any (a look-up, never a parse)."""
    return next((column for column in columns if column.id == column_id), None)
