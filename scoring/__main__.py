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

from scoring.engine.io import InputFileError
from scoring.engine.metrics import Value
from scoring.engine.registry import CLASS_MEASURES, METRICS
from scoring.engine.scorer import score_files
from scoring.engine.suite import Report


def format_value(value: Value | int, digits: int = 4) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        first, *rest = (str(c) for c in cells)
        return "  ".join([first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))])

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def matrix_table(matrix: np.ndarray, labels: Sequence[str]) -> str:
    digits = 0 if np.all(np.mod(matrix, 1) == 0) else 4
    rows = [[f"pred {label}", *(f"{x:.{digits}f}" for x in row)] for label, row in zip(labels, matrix, strict=True)]
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
        [metric.name, metric.key, format_value(report.metrics[metric.key]), format_value(report.calibrated[metric.key])]
        for metric in METRICS
    ]
    sections.append("Metrics\n" + table(["metric", "key", "raw", "calibrated"], metric_rows))
    class_rows = [
        [
            label,
            *(format_value(report.per_class[label][m.key]) for m in CLASS_MEASURES),
            format_value(report.per_class[label]["support"]),
            format_value(report.per_class[label]["predicted"]),
        ]
        for label in labels
    ]
    header = ["class", *(m.key for m in CLASS_MEASURES), "support", "predicted"]
    sections.append("Per class (one-vs-rest, paper 004; dp uses the natural log)\n" + table(header, class_rows))
    return "\n\n".join(sections) + "\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scoring",
        description="Score a prediction file against a gold file with the full metric suite.",
    )
    parser.add_argument("gold", help="gold file: CSV or TSV with the header id,label")
    parser.add_argument("predictions", help="predictions: id,label, or id plus one probability column per label")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--labels", help="comma-separated label order (default: the gold file's sorted labels)")
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
    if args.format == "json":
        json.dump(report.as_json(), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
