"""The metric registry: the one place that knows every metric's name, formula and properties.

The CLI, the pages, the exports and the tests all read metrics from here. Properties PI-PV are
those of paper 000, Table 5: PI monotonicity, PII class sensitivity, PIII class
decomposability, PIV prevalence invariance, PV chance correction. ``holds`` is the raw metric,
``calibrated`` the metric after prevalence calibration (Table 5's bracketed column); ``None``
means the papers do not analyse that property for that metric.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np

from scoring.engine import label_sets
from scoring.engine import metrics as m
from scoring.engine.canonical import matrix_value
from scoring.engine.metrics import Quantities, Value
from scoring.engine.ranking import HIGHER, LOWER, Direction

PROPERTY_NAMES: dict[str, str] = {
    "PI": "monotonicity",
    "PII": "class sensitivity",
    "PIII": "class decomposability",
    "PIV": "prevalence invariance",
    "PV": "chance correction",
}


@dataclass(frozen=True)
class Property:
    """Whether a property holds for the raw metric and after prevalence calibration."""

    holds: bool | None
    calibrated: bool | None


def _props(raw: str, calibrated: str | None = None) -> dict[str, Property]:
    """Properties from two strings over "PI PII PIII PIV PV": y = holds, n = not, ? = unknown.

    The calibrated string defaults to the raw one with PIV holding, since prevalence
    calibration gives every metric prevalence invariance (paper 000, Section 5).
    """
    if calibrated is None:
        calibrated = raw[:3] + "y" + raw[4:]
    value = {"y": True, "n": False, "?": None}
    return {
        name: Property(holds=value[r], calibrated=value[c])
        for name, r, c in zip(PROPERTY_NAMES, raw, calibrated, strict=True)
    }


@dataclass(frozen=True)
class ChanceBaseline:
    """The best score of a random classifier, c(n), where it depends on n alone (property PV).

    ``strict``: every random classifier scores exactly c(n); otherwise c(n) is an upper bound.
    ``complete``: c(n) does not even depend on n.
    """

    value: Callable[[int], float]
    text: str
    strict: bool = False
    complete: bool = False


INVERSE_N = ChanceBaseline(value=lambda n: 1.0 / n, text="1/n")
INVERSE_N_STRICT = ChanceBaseline(value=lambda n: 1.0 / n, text="1/n, strict", strict=True)
ZERO_COMPLETE = ChanceBaseline(value=lambda n: 0.0, text="0, complete", strict=True, complete=True)


@dataclass(frozen=True)
class Metric:
    """A metric of the suite and everything a page or a test needs to know about it.

    ``formula`` is the metric's one formula (:mod:`scoring.engine.metrics`), a function of the
    quantities of a stack of matrices in any arithmetic; calling the metric on a matrix gives
    its value correctly rounded (:mod:`scoring.engine.canonical`), as the suite stores it.
    """

    key: str
    name: str
    symbol: str
    formula: Callable[[Quantities], object]
    formula_latex: str
    formula_text: str
    source: str
    description: str
    kind: Literal["ranking", "diagnostic"] = "ranking"
    value_range: tuple[float | None, float | None] = (0.0, 1.0)
    properties: dict[str, Property] = field(default_factory=lambda: _props("?????", "?????"))
    properties_source: str = "not analysed in the papers"
    baseline: ChanceBaseline | None = None
    direction: Direction = HIGHER
    """Which values are better: every rank, sort, rank correlation and bold cell follows it
    (:mod:`scoring.engine.ranking`, rank 1 the best)."""
    scale: Literal["nominal", "ordinal"] = "nominal"
    """``ordinal``: the metric reads the label order as a scale, so a task scores it only when
    its organiser declares the labels ordered (:data:`ORDINAL_METRICS`)."""
    scope: Literal["matrix", "items", "labels"] = "matrix"
    """``matrix``: a function of one confusion matrix (a task's, or each output's, averaged over
    the outputs of a task with several). ``items`` and ``labels``: a task with several outputs
    only (:data:`ITEM_METRICS`), read from its items, ``formula`` a function of
    :class:`~scoring.engine.label_sets.ItemCounts`; ``labels`` where every output is a 0/1
    label. These have no calibrated twin."""

    do_not_call_in_templates: ClassVar[bool] = True
    """A metric is callable: this keeps a template engine from calling it when a page reads
    ``column.metric.name``."""

    def __call__(self, matrix: np.ndarray) -> Value:
        return matrix_value(self.formula, matrix)

    @property
    def is_ranking(self) -> bool:
        return self.kind == "ranking"

    @property
    def higher_is_better(self) -> bool:
        return self.direction.higher_is_better


TABLE5 = "@opitz-overview, Table 5"
NOT_MONOTONE_CALIBRATED = (
    "; calibrated PI fails: on [[0,0,0],[0,0,0],[1,1,1]] one more error in cell (0, 1) raises the "
    "calibrated score (the error takes calibrated mass of gold b out of row c)"
)
DERIVED = "derived from the definition (not in Table 5); checked by the property tests"

METRICS: tuple[Metric, ...] = (
    Metric(
        key="accuracy",
        name="Accuracy",
        symbol="Acc",
        formula=m.accuracy,
        formula_latex=r"\frac{\sum_i m_{ii}}{\sum_{i,j} m_{ij}}",
        formula_text="Σᵢ correct(i) / Σᵢⱼ mᵢⱼ",
        source="@opitz-overview, Eq. 7",
        description="Share of correct predictions; equal to micro precision, micro recall and "
        "micro F1. After prevalence calibration it equals macro recall (Eq. 14-16).",
        properties=_props("ynnnn", "yyyyy"),
        properties_source=TABLE5 + "; calibrated: equals macro recall (Eq. 14-16)",
    ),
    Metric(
        key="macro_precision",
        name="Macro precision",
        symbol="macP",
        formula=m.macro_precision,
        formula_latex=r"\frac{1}{n}\sum_i \frac{m_{ii}}{\sum_x m_{ix}}",
        formula_text="(1/n) Σᵢ correct(i) / bias(i)",
        source="@opitz-overview, Eq. 17",
        description="Mean of per-class precision: how far a prediction of each class can be "
        "trusted. Depends on the classifier's bias, hence on the prevalence of other classes.",
        properties=_props("yyyny", "nyyyy"),
        properties_source=TABLE5 + NOT_MONOTONE_CALIBRATED,
        baseline=INVERSE_N_STRICT,
    ),
    Metric(
        key="macro_recall",
        name="Macro recall",
        symbol="macR",
        formula=m.macro_recall,
        formula_latex=r"\frac{1}{n}\sum_i \frac{m_{ii}}{\sum_x m_{xi}}",
        formula_text="(1/n) Σᵢ correct(i) / prevalence(i)",
        source="@opitz-overview, Eq. 8",
        description="Mean of per-class recall, also prevalence-calibrated accuracy and the "
        "bookmaker metric. The only metric of the overview with all five properties.",
        properties=_props("yyyyy"),
        properties_source=TABLE5,
        baseline=INVERSE_N_STRICT,
    ),
    Metric(
        key="macro_f1",
        name="Macro F1 (averaged F1)",
        symbol="macF1",
        formula=m.macro_f1,
        formula_latex=r"\frac{1}{n}\sum_i \frac{2 P_i R_i}{P_i + R_i}",
        formula_text="(1/n) Σᵢ 2·Pᵢ·Rᵢ / (Pᵢ + Rᵢ)",
        source="@opitz-overview, Eq. 18; @opitz-burst-note, Eq. 2",
        description="Arithmetic mean of per-class F1, what scikit-learn calls macro F1 and "
        "@opitz-burst-note recommend. Its chance baseline 1/n is an upper bound, reached when the "
        "classifier predicts each class as often as it occurs.",
        properties=_props("yyyny", "nyyyy"),
        properties_source=TABLE5 + NOT_MONOTONE_CALIBRATED,
        baseline=INVERSE_N,
    ),
    Metric(
        key="macro_f1_of_averages",
        name="Macro F1 (F1 of averages)",
        symbol="macF1'",
        formula=m.macro_f1_of_averages,
        formula_latex=r"\frac{2\,\mathrm{macP}\,\mathrm{macR}}{\mathrm{macP} + \mathrm{macR}}",
        formula_text="2·macP·macR / (macP + macR)",
        source="@opitz-overview, Eq. 20; @opitz-burst-note, Eq. 3",
        description="Harmonic mean of macro precision and macro recall, the 'name twin' of "
        "macro F1. Never below the averaged F1, and it rewards classifiers with skewed error "
        "types (@opitz-burst-note).",
        properties=_props("yynny", "nynyy"),
        properties_source=TABLE5 + NOT_MONOTONE_CALIBRATED,
        baseline=INVERSE_N_STRICT,
    ),
    Metric(
        key="macro_f1_gap",
        name="Gap between the two macro F1s (Δ)",
        symbol="Δ",
        formula=m.macro_f1_gap,
        formula_latex=r"\frac{1}{n\sum_x (P_x+R_x)}\sum_{x,y}"
        r"\frac{(P_x R_y - P_y R_x)^2}{(P_x+R_x)(P_y+R_y)}",
        formula_text="F1 of averages − averaged F1 (closed form: the Lemma, Eq. 4)",
        source="@opitz-burst-note, Theorem and Lemma (Eq. 4)",
        description="A diagnostic, not a ranking metric: 0 when every class has precision "
        "equal to recall (and only then if every class has a correct item), large when classes "
        "err in opposite directions. At most "
        "0.5 (n even) or 0.5 - 1/(2n²) (n odd).",
        kind="diagnostic",
        value_range=(0.0, 0.5),
    ),
    Metric(
        key="gmean_recall",
        name="Geometric mean of recalls",
        symbol="GmacR",
        formula=m.gmean_recall,
        formula_latex=r"\sqrt[n]{R_1 \cdots R_n}",
        formula_text="(R₁ · … · Rₙ)^(1/n)",
        source="@opitz-overview, Eq. 25",
        description="Like macro recall but punishes a class that is predicted badly: 0 as soon "
        "as one class has recall 0. Useful when every class must be predicted well.",
        properties=_props("yyyyy"),
        properties_source="@opitz-overview, Section 5 ('same as macR, has all five properties')",
        baseline=INVERSE_N,
    ),
    Metric(
        key="hmean_recall",
        name="Harmonic mean of recalls",
        symbol="HmacR",
        formula=m.hmean_recall,
        formula_latex=r"\frac{n}{\sum_i 1/R_i}",
        formula_text="n / Σᵢ (1/Rᵢ)",
        source="@opitz-overview, Eq. 4 with p = -1",
        description="Generalised mean of recalls with p = -1: even stricter than the geometric "
        "mean towards the worst class.",
        properties=_props("yyyyy"),
        properties_source=DERIVED,
        baseline=INVERSE_N,
    ),
    Metric(
        key="kappa",
        name="Cohen's kappa",
        symbol="κ",
        formula=m.kappa,
        formula_latex=r"\frac{c - \mathbf{p}^\top\mathbf{b}}{1 - \mathbf{p}^\top\mathbf{b}}",
        formula_text="(c − p·b) / (1 − p·b) on the normalised matrix",
        source="@opitz-overview, Eq. 24",
        description="Accuracy corrected for the agreement expected by chance. After prevalence "
        "calibration it is (c - 1/n)/(1 - 1/n), a monotone function of macro recall.",
        value_range=(-1.0, 1.0),
        properties=_props("nynny", "yynyy"),
        properties_source=TABLE5 + "; calibrated PI holds: calibrated kappa = (macR - 1/n)/(1 - 1/n) "
        "increases with macro recall, which has PI",
        baseline=ZERO_COMPLETE,
    ),
    Metric(
        key="mcc",
        name="Matthews correlation coefficient (multi-class)",
        symbol="MCC",
        formula=m.mcc,
        formula_latex=r"\frac{c - \mathbf{p}^\top\mathbf{b}}"
        r"{\sqrt{1 - \mathbf{b}^\top\mathbf{b}}\,\sqrt{1 - \mathbf{p}^\top\mathbf{p}}}",
        formula_text="(c − p·b) / (√(1 − b·b) · √(1 − p·p)) on the normalised matrix",
        source="@opitz-overview, Eq. 23 (Gorodkin)",
        description="Correlation between predictions and gold labels; like kappa, but its "
        "denominator depends more on the classifier's bias.",
        value_range=(-1.0, 1.0),
        properties=_props("nynny"),
        properties_source=TABLE5,
        baseline=ZERO_COMPLETE,
    ),
    Metric(
        key="weighted_precision",
        name="Prevalence-weighted precision",
        symbol="wP",
        formula=m.weighted_of(m.precision_of_counts),
        formula_latex=r"\sum_i \omega_i P_i,\ \omega_i = \frac{\mathrm{prevalence}(i)}{N}",
        formula_text="Σᵢ ωᵢ·Pᵢ with ωᵢ = prevalence(i)/N",
        source="@measures-table, Table 3 (macro-weighted, prevalence weights)",
        description="Per-class precision weighted by class frequency: scikit-learn's average='weighted'.",
    ),
    Metric(
        key="weighted_recall",
        name="Prevalence-weighted recall",
        symbol="wR",
        formula=m.weighted_of(m.recall_of_counts),
        formula_latex=r"\sum_i \omega_i R_i,\ \omega_i = \frac{\mathrm{prevalence}(i)}{N}",
        formula_text="Σᵢ ωᵢ·Rᵢ with ωᵢ = prevalence(i)/N",
        source="@measures-table, Table 3 (macro-weighted, prevalence weights)",
        description="Per-class recall weighted by class frequency; algebraically equal to "
        "accuracy, so it has accuracy's properties.",
        properties=_props("ynnnn", "yyyyy"),
        properties_source="equals accuracy (" + TABLE5 + ")",
    ),
    Metric(
        key="weighted_f1",
        name="Prevalence-weighted F1",
        symbol="wF1",
        formula=m.weighted_of(m.f1_of_counts),
        formula_latex=r"\sum_i \omega_i F1_i,\ \omega_i = \frac{\mathrm{prevalence}(i)}{N}",
        formula_text="Σᵢ ωᵢ·F1ᵢ with ωᵢ = prevalence(i)/N",
        source="@measures-table, Table 3 (macro-weighted, prevalence weights)",
        description="Per-class F1 weighted by class frequency: scikit-learn's average='weighted'.",
    ),
    Metric(
        key="macro_mcc",
        name="Macro MCC (mean of one-vs-rest MCC)",
        symbol="MMCC",
        formula=m.macro_of(m.mcc_of_counts),
        formula_latex=r"\frac{1}{n}\sum_i \mathrm{MCC}_i",
        formula_text="(1/n) Σᵢ MCCᵢ, one-vs-rest",
        source="@measures-table, Tables 1 and 3 (uniform weights)",
        description="Mean of the binary MCC of each class against the rest; undefined if one class's MCC is undefined.",
        value_range=(-1.0, 1.0),
    ),
    Metric(
        key="macro_bacc",
        name="Macro balanced accuracy (mean of one-vs-rest BACC)",
        symbol="MBACC",
        formula=m.macro_of(m.bacc_of_counts),
        formula_latex=r"\frac{1}{n}\sum_i \frac{1}{2}\left(\frac{TP_i}{TP_i+FN_i}"
        r"+\frac{TN_i}{TN_i+FP_i}\right)",
        formula_text="(1/n) Σᵢ (sensitivityᵢ + specificityᵢ)/2, one-vs-rest",
        source="@measures-table, Tables 1 and 3 (uniform weights)",
        description="Mean over classes of the average of sensitivity and specificity.",
    ),
    Metric(
        key="macro_dp",
        name="Macro discriminant power",
        symbol="MDP",
        formula=m.macro_dp,
        formula_latex=r"\frac{1}{n}\sum_i \frac{\sqrt{3}}{\pi}"
        r"\ln\left(\frac{TP_i}{FP_i}\cdot\frac{TN_i}{FN_i}\right)",
        formula_text="(1/n) Σᵢ (√3/π)·ln(TPᵢ/FPᵢ · TNᵢ/FNᵢ), natural log",
        source="@measures-table, Tables 1 and 3 (uniform weights)",
        description="Mean per-class discriminant power (natural logarithm; PyCM's log10 "
        "values are these divided by ln 10). Undefined if any class has an empty cell.",
        value_range=(None, None),
    ),
    Metric(
        key="micro_mcc",
        name="Micro MCC (pooled one-vs-rest counts)",
        symbol="MCCµ",
        formula=m.micro_of(m.mcc_of_counts),
        formula_latex=r"\frac{\sum TP \sum TN - \sum FP \sum FN}{\sqrt{(\sum TP+\sum FP)"
        r"(\sum TP+\sum FN)(\sum TN+\sum FP)(\sum TN+\sum FN)}}",
        formula_text="MCC of the summed TP, FP, FN, TN over classes",
        source="@measures-table, Table 2 (uniform weights)",
        description="The binary MCC of the pooled one-vs-rest counts of all classes.",
        value_range=(-1.0, 1.0),
    ),
    Metric(
        key="micro_bacc",
        name="Micro balanced accuracy (pooled counts)",
        symbol="BACCµ",
        formula=m.micro_of(m.bacc_of_counts),
        formula_latex=r"\frac{1}{2}\left(\frac{\sum TP}{\sum TP+\sum FN}"
        r"+\frac{\sum TN}{\sum TN+\sum FP}\right)",
        formula_text="balanced accuracy of the summed TP, FP, FN, TN",
        source="@measures-table, Table 2 (uniform weights)",
        description="Balanced accuracy of the pooled one-vs-rest counts of all classes.",
    ),
    Metric(
        key="micro_dp",
        name="Micro discriminant power (pooled counts)",
        symbol="DPµ",
        formula=m.micro_of(m.dp_of_counts),
        formula_latex=r"\frac{\sqrt{3}}{\pi}\ln\left(\frac{\sum TP}{\sum FP}"
        r"\cdot\frac{\sum TN}{\sum FN}\right)",
        formula_text="(√3/π)·ln(ΣTP/ΣFP · ΣTN/ΣFN), natural log",
        source="@measures-table, Table 2 (uniform weights)",
        description="Discriminant power of the pooled one-vs-rest counts of all classes.",
        value_range=(None, None),
    ),
)

ORDINAL_METRICS: tuple[Metric, ...] = (
    Metric(
        key="macro_mae",
        name="Macro-averaged mean absolute error",
        symbol="MAEᴹ",
        formula=m.macro_mae,
        formula_latex=r"\frac{1}{|C|}\sum_{j \in C} \frac{\sum_i |i-j|\, m_{ij}}{\sum_i m_{ij}}",
        formula_text="(1/|C|) Σⱼ (1/|Teⱼ|) Σ_{x ∈ Teⱼ} |h(x) − y(x)|, over the gold classes C that have items",
        source="@semeval2017-task4, subtask C",
        description="For labels on an ordered scale (positions 0, 1, … in the task's label order): each "
        "gold class's mean distance between prediction and gold label, averaged over the classes, so a "
        "rare class weighs as much as a frequent one. An error: lower is better. For probability "
        "outputs, each item's expected distance Σᵢ pᵢ·|i − y|. Prevalence invariant, so its calibrated "
        "value is its raw value.",
        value_range=(0.0, None),
        properties=_props("???y?"),
        properties_source="PIV derived from the definition (a mean of per-class means; not in Table 5); "
        "checked by the property tests. The others are not analysed in the papers.",
        direction=LOWER,
        scale="ordinal",
    ),
    Metric(
        key="mae",
        name="Mean absolute error",
        symbol="MAEµ",
        formula=m.mae,
        formula_latex=r"\frac{\sum_{i,j} |i-j|\, m_{ij}}{\sum_{i,j} m_{ij}}",
        formula_text="(1/|Te|) Σ_{x ∈ Te} |h(x) − y(x)|",
        source="@semeval2017-task4, subtask C",
        description="For labels on an ordered scale: the mean distance between prediction and gold label "
        "over all items, so frequent classes dominate. An error: lower is better. After prevalence "
        "calibration every class has the same mass and it equals the macro-averaged MAE.",
        value_range=(0.0, None),
        properties=_props("???n?"),
        properties_source="PIV derived from the definition: scaling a gold column re-weights its errors "
        "(a witness in the property tests); calibrated, it is the macro-averaged MAE, which has PIV.",
        direction=LOWER,
        scale="ordinal",
    ),
)
"""The errors of ordinal tasks (SemEval-2017 Task 4, subtask C): scored, ranked and shown only
for a task whose labels its organiser declares an ordered scale (``ordinal``); not part of
:data:`METRICS`, whose every member reads the labels as names (invariant when they are
renamed)."""

NO_CALIBRATED_TWIN = (
    "No calibrated twin: calibration rescales the gold classes of one output's confusion matrix "
    "(@opitz-overview, Eq. 6), and this metric reads the items across the outputs, where no such matrix exists."
)


def _item_metric(key: str, name: str, symbol: str, formula, latex: str, text: str, description: str, **options):
    return Metric(
        key=key,
        name=name,
        symbol=symbol,
        formula=formula,
        formula_latex=latex,
        formula_text=text,
        description=f"{description} {NO_CALIBRATED_TWIN}",
        properties_source="not analysed in the papers",
        **options,
    )


ITEM_METRICS: tuple[Metric, ...] = (
    _item_metric(
        "exact_match",
        "Exact match ratio",
        "EMR",
        label_sets.exact_match,
        r"\frac{1}{n}\sum_{x} [\hat{y}(x) = y(x)]",
        "(items whose every output is right) / n",
        "The share of items with every output right (HatEval's exact match ratio): one wrong output and the "
        "item counts as wrong.",
        source="@semeval2019-task5, subtask B",
        scope="items",
    ),
    _item_metric(
        "hamming_loss",
        "Hamming loss",
        "HL",
        label_sets.hamming_loss,
        r"\frac{1}{n\,K}\sum_{x}\sum_{k} [\hat{y}_k(x) \neq y_k(x)]",
        "(item-output cells wrong) / (n · K), K outputs",
        "The share of an item's outputs that are wrong, over every item: an error, lower is better.",
        source="the share of wrong item-output cells",
        direction=LOWER,
        scope="items",
    ),
    _item_metric(
        "label_micro_precision",
        "Micro precision over the labels",
        "µP",
        label_sets.label_micro_precision,
        r"\frac{\sum_k \mathrm{TP}_k}{\sum_k (\mathrm{TP}_k + \mathrm{FP}_k)}",
        "ΣTP / (ΣTP + ΣFP), the present labels pooled over the labels; 0 if none is predicted",
        "How far a label predicted present can be trusted, the counts of every label pooled.",
        source="@measures-table, Table 2 (micro-weighted, counts pooled over the labels)",
        scope="labels",
    ),
    _item_metric(
        "label_micro_recall",
        "Micro recall over the labels",
        "µR",
        label_sets.label_micro_recall,
        r"\frac{\sum_k \mathrm{TP}_k}{\sum_k (\mathrm{TP}_k + \mathrm{FN}_k)}",
        "ΣTP / (ΣTP + ΣFN); 0 if no label is present in the gold",
        "The share of the gold's present labels that are predicted, the counts of every label pooled.",
        source="@measures-table, Table 2 (micro-weighted, counts pooled over the labels)",
        scope="labels",
    ),
    _item_metric(
        "label_micro_f1",
        "Micro F1 over the labels",
        "µF1",
        label_sets.label_micro_f1,
        r"\frac{2\sum_k \mathrm{TP}_k}{2\sum_k \mathrm{TP}_k + \sum_k \mathrm{FP}_k + \sum_k \mathrm{FN}_k}",
        "2ΣTP / (2ΣTP + ΣFP + ΣFN); 0 if no label is predicted or present",
        "The harmonic mean of micro precision and micro recall: SemEval-2018 E-c's micro F1.",
        source="@semeval2018-task1, subtask E-c",
        scope="labels",
    ),
    _item_metric(
        "label_macro_precision",
        "Macro precision over the labels",
        "MP",
        label_sets.label_macro_precision,
        r"\frac{1}{K}\sum_k \frac{\mathrm{TP}_k}{\mathrm{TP}_k + \mathrm{FP}_k}",
        "(1/K) Σₖ TPₖ / (TPₖ + FPₖ), 0/0 = 0",
        "Each label's precision of its presence, averaged over the labels.",
        source="@measures-table, Table 3 (macro-weighted, equal weights)",
        scope="labels",
    ),
    _item_metric(
        "label_macro_recall",
        "Macro recall over the labels",
        "MR",
        label_sets.label_macro_recall,
        r"\frac{1}{K}\sum_k \frac{\mathrm{TP}_k}{\mathrm{TP}_k + \mathrm{FN}_k}",
        "(1/K) Σₖ TPₖ / (TPₖ + FNₖ), 0/0 = 0",
        "Each label's recall of its presence, averaged over the labels.",
        source="@measures-table, Table 3 (macro-weighted, equal weights)",
        scope="labels",
    ),
    _item_metric(
        "label_macro_f1",
        "Macro F1 over the labels",
        "MF1",
        label_sets.label_macro_f1,
        r"\frac{1}{K}\sum_k \frac{2\,\mathrm{TP}_k}{2\,\mathrm{TP}_k + \mathrm{FP}_k + \mathrm{FN}_k}",
        "(1/K) Σₖ 2TPₖ / (2TPₖ + FPₖ + FNₖ), 0/0 = 0",
        "Each label's F1 of its presence, averaged over the labels: SemEval-2018 E-c's macro F1.",
        source="@semeval2018-task1, subtask E-c",
        scope="labels",
    ),
    _item_metric(
        "jaccard",
        "Jaccard index (mean over items)",
        "J",
        label_sets.jaccard,
        r"\frac{1}{n}\sum_x \frac{|P(x) \cap G(x)|}{|P(x) \cup G(x)|}",
        "(1/n) Σₓ |P ∩ G| / |P ∪ G|, 1 for an item with no label predicted or present",
        "How much of an item's labels, predicted and gold together, both agree on: SemEval-2018 E-c's "
        "ranking score (its 'accuracy').",
        source="@semeval2018-task1, subtask E-c",
        scope="labels",
    ),
    _item_metric(
        "samples_f1",
        "F1 of each item's labels (mean over items)",
        "sF1",
        label_sets.samples_f1,
        r"\frac{1}{n}\sum_x \frac{2\,|P(x) \cap G(x)|}{|P(x)| + |G(x)|}",
        "(1/n) Σₓ 2|P ∩ G| / (|P| + |G|), 1 for an item with no label predicted or present",
        "Each item's F1 of its predicted labels against its gold labels, averaged over the items.",
        source="the F1 of each item's label sets",
        scope="labels",
    ),
)
"""The metrics of a task with several outputs that read its items (:mod:`scoring.engine.label_sets`):
the exact match ratio and the Hamming loss of every such task, and, when every output is a 0/1
label, the label-set metrics of multi-label tasks. Beside them such a task has every metric of
:data:`METRICS`, each the mean over the outputs of that output's value."""

BY_KEY: dict[str, Metric] = {metric.key: metric for metric in (*METRICS, *ORDINAL_METRICS, *ITEM_METRICS)}


def item_metrics(*, labels: bool) -> tuple[Metric, ...]:
    """The item metrics of a task with several outputs: with the label-set ones when every
    output is a 0/1 label (``labels``)."""
    return tuple(metric for metric in ITEM_METRICS if labels or metric.scope == "items")


def get(key: str) -> Metric:
    """The metric registered under ``key``; ``KeyError`` names the known keys."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r}; known: {', '.join(BY_KEY)}") from None


def suite_metrics(*, ordinal: bool = False) -> tuple[Metric, ...]:
    """The metrics a report holds: :data:`METRICS`, and :data:`ORDINAL_METRICS` after them for a
    task whose labels are an ordered scale."""
    return (*METRICS, *ORDINAL_METRICS) if ordinal else METRICS


def ranking_metrics(*, ordinal: bool = False) -> Iterator[Metric]:
    """The metrics that rank teams (every metric of the suite but the diagnostics)."""
    return (metric for metric in suite_metrics(ordinal=ordinal) if metric.is_ranking)


@dataclass(frozen=True)
class ClassMeasure:
    """A one-vs-rest measure of paper 004, computed for every class at once.

    ``formula`` gives one value per class (class axis first) in any arithmetic; calling the
    measure on a matrix gives the values correctly rounded (``None`` where undefined), as the
    suite stores them.
    It has the display attributes of :class:`Metric`, so a page about the measure of one class
    (a per-class board column, :class:`scoring.engine.columns.Column`) reads it the same way.
    """

    key: str
    name: str
    symbol: str
    of_counts: Callable[..., object]
    formula_text: str
    value_range: tuple[float | None, float | None] = (0.0, 1.0)
    properties: dict[str, Property] = field(default_factory=lambda: _props("?????", "?????"))
    properties_source: str = "not analysed in the papers"
    source: str = "@opitz-overview, Eq. 1-2; @measures-table, Table 1"
    formula_latex: str = ""
    baseline: ChanceBaseline | None = None
    kind: Literal["ranking", "diagnostic"] = "ranking"
    direction: Direction = HIGHER

    do_not_call_in_templates: ClassVar[bool] = True
    scope: ClassVar[str] = "matrix"
    """A function of one confusion matrix (as :attr:`Metric.scope`)."""

    @property
    def higher_is_better(self) -> bool:
        return self.direction.higher_is_better

    @property
    def formula(self) -> Callable[[Quantities], object]:
        """The measure of every class at once (class axis first), from :attr:`of_counts`."""
        return m.per_class(self.of_counts)

    def __call__(self, matrix: np.ndarray) -> list[Value]:
        return matrix_value(self.formula, matrix)

    @property
    def description(self) -> str:
        return f"The {self.name.lower()} of one class against all the others."


CLASS_MEASURES: tuple[ClassMeasure, ...] = (
    ClassMeasure(
        "precision",
        "Precision",
        "P",
        m.precision_of_counts,
        "TP / (TP + FP); 0 if TP + FP = 0",
        formula_latex=r"\frac{\mathrm{TP}}{\mathrm{TP}+\mathrm{FP}}",
    ),
    ClassMeasure(
        "recall",
        "Recall",
        "R",
        m.recall_of_counts,
        "TP / (TP + FN); 0 if TP + FN = 0",
        formula_latex=r"\frac{\mathrm{TP}}{\mathrm{TP}+\mathrm{FN}}",
        properties=_props("???y?", "???y?"),
        properties_source="class recall is prevalence invariant (@opitz-overview, B.4)",
    ),
    ClassMeasure(
        "f1",
        "F1",
        "F1",
        m.f1_of_counts,
        "2·P·R / (P + R); 0 if P + R = 0",
        formula_latex=r"\frac{2 P R}{P + R}",
    ),
    ClassMeasure(
        "mcc",
        "MCC",
        "MCC",
        m.mcc_of_counts,
        "(TP·TN − FP·FN) / √((TP+FP)(TP+FN)(TN+FP)(TN+FN))",
        (-1.0, 1.0),
        formula_latex=r"\frac{\mathrm{TP}\cdot\mathrm{TN}-\mathrm{FP}\cdot\mathrm{FN}}"
        r"{\sqrt{(\mathrm{TP}+\mathrm{FP})(\mathrm{TP}+\mathrm{FN})(\mathrm{TN}+\mathrm{FP})(\mathrm{TN}+\mathrm{FN})}}",
    ),
    ClassMeasure(
        "bacc",
        "Balanced accuracy",
        "BACC",
        m.bacc_of_counts,
        "(TP/(TP+FN) + TN/(TN+FP)) / 2",
        formula_latex=r"\frac{1}{2}\left(\frac{\mathrm{TP}}{\mathrm{TP}+\mathrm{FN}}"
        r"+\frac{\mathrm{TN}}{\mathrm{TN}+\mathrm{FP}}\right)",
    ),
    ClassMeasure(
        "dp",
        "Discriminant power",
        "DP",
        m.dp_of_counts,
        "(√3/π)·ln(TP/FP · TN/FN), natural log",
        (None, None),
        formula_latex=r"\frac{\sqrt{3}}{\pi}\ln\left(\frac{\mathrm{TP}}{\mathrm{FP}}\cdot\frac{\mathrm{TN}}{\mathrm{FN}}\right)",
    ),
)
"""The per-class measures, in the order of per-class tables; the suite, the CLI, the pages
and the exports all read them from here."""

CLASS_MEASURE_BY_KEY: dict[str, ClassMeasure] = {measure.key: measure for measure in CLASS_MEASURES}


def class_measure(key: str) -> ClassMeasure:
    """The per-class measure registered under ``key``; ``KeyError`` names the known keys."""
    try:
        return CLASS_MEASURE_BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown per-class measure {key!r}; known: {', '.join(CLASS_MEASURE_BY_KEY)}") from None
