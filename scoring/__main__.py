"""The standalone scorer: ``python -m scoring GOLD PRED [--format json] [--labels a,b,c]``.

Prints the full metric suite of a prediction file against a gold file, as readable tables or
as one JSON object (contract, see :meth:`scoring.engine.suite.Report.as_json`). Exit status 0
on success; 2 with a message naming the file, the line and the problem on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import numpy as np

from scoring.engine.calibration import scale_to_distribution
from scoring.engine.formatting import mass_text, value_text
from scoring.engine.io import InputFileError
from scoring.engine.metrics import macro_f1_gap_closed_form
from scoring.engine.registry import CLASS_MEASURES, METRICS
from scoring.engine.scorer import score_files
from scoring.engine.suite import Report, metric_values, weighted_averages


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        first, *rest = (str(c) for c in cells)
        return "  ".join([first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))])

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def matrix_table(matrix: np.ndarray, labels: Sequence[str]) -> str:
    rows = [[f"pred {label}", *(mass_text(x) for x in row)] for label, row in zip(labels, matrix, strict=True)]
    return table(["", *(f"gold {label}" for label in labels)], rows)


def text_report(report: Report) -> str:
    labels = report.labels
    sections = [
        f"{report.n_items} items, {len(labels)} classes: {', '.join(labels)}",
        "Confusion matrix (rows: predicted, columns: gold)\n" + matrix_table(report.matrix, labels),
    ]
    if report.calibrated_matrix is not None:
        sections.append(
            "Prevalence-calibrated matrix (paper 000, Eq. 6)\n" + matrix_table(report.calibrated_matrix, labels)
        )
    else:
        sections.append("Prevalence calibration is undefined: a class has no gold item.")
    metric_rows = [
        [metric.name, metric.key, value_text(report.metrics[metric.key]), value_text(report.calibrated[metric.key])]
        for metric in METRICS
    ]
    sections.append("Metrics\n" + table(["metric", "key", "raw", "calibrated"], metric_rows))
    sections.append(
        "The two macro F1s (paper 002): Δ = F1 of averages − averaged F1 = "
        f"{value_text(report.metrics['macro_f1_gap'], 6)}; by the closed form of its Lemma (Eq. 4): "
        f"{value_text(macro_f1_gap_closed_form(report.matrix), 6)}"
    )
    class_rows = [
        [
            label,
            *(value_text(report.per_class[label][m.key]) for m in CLASS_MEASURES),
            mass_text(report.per_class[label]["support"]),
            mass_text(report.per_class[label]["predicted"]),
        ]
        for label in labels
    ]
    header = ["class", *(m.key for m in CLASS_MEASURES), "support", "predicted"]
    sections.append("Per class (one-vs-rest, paper 004; dp uses the natural log)\n" + table(header, class_rows))
    return "\n\n".join(sections) + "\n"


def extras(report: Report, *, weights: list[float] | None, prevalence: list[float] | None) -> dict:
    """Optional sections: averages with caller-given class weights (paper 004) and every metric
    after scaling the gold columns to a target class distribution (paper 000, Eq. 5)."""
    out: dict = {}
    if weights is not None:
        out["weighted"] = {"weights": weights, **weighted_averages(report.matrix, np.array(weights))}
    if prevalence is not None:
        out["scaled"] = {
            "prevalence": prevalence,
            "metrics": metric_values(scale_to_distribution(report.matrix, np.array(prevalence))),
        }
    return out


def extras_text(sections: dict) -> str:
    parts = []
    if "weighted" in sections:
        weighted = sections["weighted"]
        rows = [
            [key, value_text(weighted["micro"][key]), value_text(weighted["macro"][key])] for key in weighted["micro"]
        ]
        parts.append(
            f"Weighted averages with class weights ω = {weighted['weights']} (paper 004)\n"
            + table(["measure", "micro-weighted", "macro-weighted"], rows)
        )
    if "scaled" in sections:
        scaled = sections["scaled"]
        rows = [[metric.name, metric.key, value_text(scaled["metrics"][metric.key])] for metric in METRICS]
        parts.append(
            f"Metrics after scaling the gold columns to the class shares {scaled['prevalence']} (paper 000, Eq. 5)\n"
            + table(["metric", "key", "scaled"], rows)
        )
    return "".join("\n" + part + "\n" for part in parts)


def number_list(text: str, *, what: str, n: int, positive: bool = False) -> list[float]:
    """Parse "1,2,3" into n non-negative (or positive) numbers, or exit with status 2 and a
    message naming the option."""
    try:
        values = [float(item) for item in text.split(",")]
    except ValueError:
        values = []
    smallest = 0.0 if not positive else np.nextafter(0.0, 1.0)
    if len(values) != n or any(not (v >= smallest and np.isfinite(v)) for v in values) or sum(values) <= 0:
        kind = "positive" if positive else "non-negative"
        print(f"error: {what} needs {n} comma-separated {kind} numbers, one per label, got {text!r}", file=sys.stderr)
        raise SystemExit(2)
    return values


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scoring",
        description="Score a prediction file against a gold file with the full metric suite.",
    )
    parser.add_argument("gold", help="gold file: CSV or TSV with the header id,label")
    parser.add_argument("predictions", help="predictions: id,label, or id plus one probability column per label")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--labels", help="comma-separated label order (default: the gold file's sorted labels)")
    parser.add_argument("--weights", help="comma-separated class weights ω, in label order: adds their averages")
    parser.add_argument(
        "--prevalence", help="comma-separated target class shares, in label order: adds every metric scaled to them"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    labels = [label.strip() for label in args.labels.split(",")] if args.labels else None
    try:
        report = score_files(args.gold, args.predictions, labels=labels)
    except InputFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"error: cannot read {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    n = len(report.labels)
    weights = number_list(args.weights, what="--weights", n=n) if args.weights else None
    prevalence = number_list(args.prevalence, what="--prevalence", n=n, positive=True) if args.prevalence else None
    more = extras(report, weights=weights, prevalence=prevalence)
    if args.format == "json":
        json.dump({**report.as_json(), **more}, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text_report(report) + extras_text(more))
    return 0


if __name__ == "__main__":
    sys.exit(main())
