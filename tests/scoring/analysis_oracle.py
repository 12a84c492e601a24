"""What an analysis of runs holds (:mod:`scoring.engine.analysis`), computed independently of the
engine in plain Python: the majority vote label by label (a tie to the first label) and every
metric of its matrix and of the oracle's from the exact oracle of ``oracle.py``; Cohen's kappa
from its definition (p_o − p_e)/(1 − p_e) in fractions; the clustering by a naive average
linkage that recomputes every mean from the kappas as fractions; the hardest items.

Of a task with several outputs (:func:`expected_outputs_analysis`), the same cell by cell: the
vote and the oracle of each output, the items some one run got entirely right, kappa as the mean
of each output's in fractions; and the vote's and the oracle's every metric from the exact means
and the item counts of ``tests/scoring/engine/test_outputs.py``."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from scoring.engine.registry import item_metrics, suite_metrics
from scoring.engine.schemes import Output
from tests.scoring import oracle
from tests.scoring.engine.test_outputs import exact_item_values, oracle_means


def matrix_of(predicted: list[str], gold: list[str], labels: list[str]) -> list[list[Fraction]]:
    """Rows predicted, columns gold."""
    m = [[Fraction(0)] * len(labels) for _ in labels]
    for p, g in zip(predicted, gold, strict=True):
        m[labels.index(p)][labels.index(g)] += 1
    return m


def report_values(m: list[list[Fraction]], keys: list[str]) -> tuple[dict, dict]:
    calibrated = oracle.calibrated(m)
    raw = {key: oracle.nearest_double(oracle.metric(m, key)) for key in keys}
    cal = {key: None if calibrated is None else oracle.nearest_double(oracle.metric(calibrated, key)) for key in keys}
    return raw, cal


def vote(runs: dict[str, list[str]], item: int, labels: list[str]) -> tuple[str, bool]:
    """The label most runs gave the item, the first in ``labels`` on a tie; whether it was one."""
    counts = [sum(1 for given in runs.values() if given[item] == label) for label in labels]
    top = max(counts)
    return labels[counts.index(top)], counts.count(top) > 1


def exact_kappa(a: list, b: list, labels: list) -> Fraction | None:
    """Cohen's kappa, (p_o − p_e) / (1 − p_e), as a fraction; ``None`` where p_e is 1."""
    n = len(a)
    observed = Fraction(sum(x == y for x, y in zip(a, b, strict=True)), n)
    chance = sum(Fraction(a.count(label) * b.count(label), n * n) for label in labels)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def kappa(a: list[str], b: list[str], labels: list[str]) -> float | None:
    """Cohen's kappa, rounded once; ``None`` where p_e is 1."""
    return oracle.nearest_double(exact_kappa(a, b, labels))


def naive_average_linkage(names: list[str], table: list[list[float | None]]) -> tuple[list[str], list[dict]]:
    """UPGMA from scratch: every step recomputes each pair of groups' mean kappa (an undefined
    one counted as 1) as a fraction; the earliest pair wins a tie."""
    value = {
        (i, j): Fraction(1 if table[i][j] is None else table[i][j])
        for i in range(len(names))
        for j in range(len(names))
    }
    groups: list[tuple[tuple[int, ...], list[str]]] = [((i,), [names[i]]) for i in range(len(names))]
    merges = []
    while len(groups) > 1:
        groups.sort(key=lambda group: group[0][0])
        best = None
        for a, b in itertools.combinations(range(len(groups)), 2):
            pairs = [value[i, j] for i in groups[a][0] for j in groups[b][0]]
            mean = sum(pairs, Fraction(0)) / len(pairs)
            if best is None or mean > best[0]:
                best = (mean, a, b)
        mean, a, b = best
        (first, first_order), (second, second_order) = groups[a], groups[b]
        merges.append({"left": [names[i] for i in first], "right": [names[i] for i in second], "kappa": float(mean)})
        groups = [g for k, g in enumerate(groups) if k not in (a, b)] + [
            (tuple(sorted(first + second)), first_order + second_order)
        ]
    return (groups[0][1] if groups else []), merges


def expected_analysis(gold: list[str], runs: dict[str, list[str]], keys: list[str], labels: list[str]) -> dict:
    """Everything an analysis holds, computed here from the labels (see the module docstring)."""
    n, teams = len(gold), list(runs)
    votes = [vote(runs, i, labels) for i in range(n)]
    majority = [label for label, _ in votes]
    right = [sum(1 for given in runs.values() if given[i] == gold[i]) for i in range(n)]
    oracle_labels = [gold[i] if right[i] else majority[i] for i in range(n)]
    recall = [  # a label without gold items counts 0, as the suite's macro recall counts it
        Fraction(sum(1 for i in range(n) if gold[i] == label and right[i]), gold.count(label) or 1) for label in labels
    ]
    table = [[kappa(runs[a], runs[b], labels) for b in teams] for a in teams]
    order, merges = naive_average_linkage(teams, table)
    unsolved = sum(1 for r in right if r == 0)
    hardest = sorted(range(n), key=lambda i: (right[i], i))[: max(unsolved, min(20, n))]
    return {
        "ties": sum(1 for _, tied in votes if tied),
        "majority_labels": majority,
        "oracle_labels": oracle_labels,
        "majority": report_values(matrix_of(majority, gold, labels), keys),
        "majority_matrix": matrix_of(majority, gold, labels),
        "oracle": report_values(matrix_of(oracle_labels, gold, labels), keys),
        "oracle_accuracy": oracle.nearest_double(Fraction(sum(1 for r in right if r), n)),
        "oracle_macro_recall": oracle.nearest_double(sum(recall, Fraction(0)) / len(labels)),
        "unsolved": {label: sum(1 for i in range(n) if gold[i] == label and not right[i]) for label in labels},
        "kappa": table,
        "order": order,
        "merges": merges,
        "hardest": [
            {"id": f"item-{i}", "gold": gold[i], "right": right[i], "labels": {t: runs[t][i] for t in teams}}
            for i in hardest
        ],
    }


def column_values(predicted: list[str], gold: list[str], columns, labels: list[str]) -> dict[str, float | None]:
    """Each board column's value (``columns``: :class:`scoring.engine.columns.Column`) of a run
    that gives these labels, from the exact oracle."""
    m = matrix_of(predicted, gold, labels)
    found = {}
    for column in columns:
        matrix = oracle.calibrated(m) if column.calibrated else m
        if matrix is None:
            value = None
        elif column.label is None:
            value = oracle.metric(matrix, column.key)
        else:
            value = oracle.per_class(matrix, column.key)[labels.index(column.label)]
        found[column.id] = oracle.nearest_double(value)
    return found


def expected_outputs_analysis(gold: list[list[int]], runs: dict[str, list[list[int]]], outputs: list[Output]) -> dict:
    """Everything an analysis of a task with several outputs holds, from the codes (items ×
    outputs), cell by cell (see the module docstring)."""
    n, teams = len(gold), list(runs)
    columns = range(len(outputs))
    codes = [list(range(len(output.labels))) for output in outputs]
    by_output = [{team: [row[o] for row in runs[team]] for team in teams} for o in columns]
    votes = [[vote(by_output[o], i, codes[o]) for o in columns] for i in range(n)]
    solved = [[any(runs[team][i][o] == gold[i][o] for team in teams) for o in columns] for i in range(n)]
    right = [sum(1 for team in teams if list(runs[team][i]) == list(gold[i])) for i in range(n)]
    majority = [[label for label, _ in row] for row in votes]
    oracle_rows = [[gold[i][o] if solved[i][o] else majority[i][o] for o in columns] for i in range(n)]
    table = []
    for a in teams:
        row = []
        for b in teams:
            values = [exact_kappa(by_output[o][a], by_output[o][b], codes[o]) for o in columns]
            row.append(None if None in values else oracle.nearest_double(sum(values, Fraction(0)) / len(values)))
        table.append(row)
    order, merges = naive_average_linkage(teams, table)
    unsolved_items = sum(1 for r in right if r == 0)
    hardest = sorted(range(n), key=lambda i: (right[i], i))[: max(unsolved_items, min(20, n))]
    return {
        "ties_per_output": [sum(1 for i in range(n) if votes[i][o][1]) for o in columns],
        "majority_rows": majority,
        "oracle_rows": oracle_rows,
        "right": right,
        "exact_match_one_run": oracle.nearest_double(Fraction(sum(1 for r in right if r), n)),
        "gold_counts": [[sum(1 for i in range(n) if gold[i][o] == k) for k in codes[o]] for o in columns],
        "unsolved": [
            [sum(1 for i in range(n) if gold[i][o] == k and not solved[i][o]) for k in codes[o]] for o in columns
        ],
        "kappa": table,
        "order": order,
        "merges": merges,
        "hardest": hardest,
        "hardest_votes": [
            [[sum(1 for team in teams if runs[team][i][o] == k) for k in codes[o]] for o in columns] for i in hardest
        ],
    }


def outputs_report_values(gold: list[list[int]], rows: list[list[int]], outputs: list[Output]) -> tuple[dict, dict]:
    """Every metric of a run of a task with several outputs (``rows``, items × outputs codes),
    raw and calibrated, from the exact means and item counts of ``test_outputs.py``."""
    gold_array, rows_array = np.array(gold), np.array(rows)
    raw, calibrated = oracle_means(gold_array, rows_array, outputs)
    items = exact_item_values(gold_array, rows_array)
    labels = all(output.is_label for output in outputs)
    metrics = {metric.key: oracle.nearest_double(raw[metric.key]) for metric in suite_metrics()}
    metrics |= {metric.key: oracle.nearest_double(items[metric.key]) for metric in item_metrics(labels=labels)}
    return metrics, {metric.key: oracle.nearest_double(calibrated[metric.key]) for metric in suite_metrics()}
