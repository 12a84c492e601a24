"""What the runs of a task with several outputs got wrong together: :func:`analyse_outputs`, the
analysis of :mod:`scoring.engine.analysis` (whose docstring holds the rules, "A task with several
outputs") output by output, its vote and oracle scored as runs of the task
(:func:`scoring.engine.outputs.score_outputs`); and an item's labels as text."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scoring.engine.analysis import Analysis, combine
from scoring.engine.label_sets import PRESENT
from scoring.engine.outputs import score_outputs
from scoring.engine.schemes import Output, outputs_are_labels

NONE_PRESENT = "none"
"""The text of a multi-label item with no label present."""


def analyse_outputs(
    gold: np.ndarray,
    codes: np.ndarray,
    *,
    outputs: Sequence[Output],
    agreement_runs: Sequence[int] | None = None,
) -> Analysis:
    """The analysis of the runs of ``codes`` (runs × items × outputs, class codes in the gold
    file's order) against ``gold`` (items × outputs) of a task of ``outputs``;
    ``agreement_runs`` as for :func:`scoring.engine.analysis.analyse`."""
    gold, codes, outputs = np.asarray(gold), np.asarray(codes), tuple(outputs)
    sizes = [len(output.labels) for output in outputs]
    found = combine(gold, codes, sizes=sizes, agreement_runs=agreement_runs)
    return found.analysis(
        lambda predicted: score_outputs(gold, predicted, outputs=outputs),
        gold=gold,
        codes=codes,
        labels=(),
        outputs=outputs,
    )


def labels_text(codes: int | Sequence[int], *, labels: Sequence[str] = (), outputs: Sequence[Output] = ()) -> str:
    """An item's labels as a person reads them: its label (one label column of ``labels``); the
    labels present, by output name, of a multi-label task ("anger, joy", or "none"); or each
    output's label ("hate: 1, target: 0")."""
    if not outputs:
        return labels[codes]
    if outputs_are_labels(outputs):
        present = [output.name for output, code in zip(outputs, codes, strict=True) if code == PRESENT]
        return ", ".join(present) or NONE_PRESENT
    return ", ".join(f"{output.name}: {output.labels[code]}" for output, code in zip(outputs, codes, strict=True))
