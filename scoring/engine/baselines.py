"""Reference classifiers built from the gold class counts alone, shown on a board, never ranked.

Each is an expected confusion matrix (rows predicted, columns gold) of ``gold_counts.sum()``
items: what the classifier scores on average, without drawing any random number.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MAJORITY = "majority"
UNIFORM = "uniform"
PREVALENCE = "prevalence"


def majority_matrix(gold_counts: np.ndarray) -> np.ndarray:
    """Always the most frequent gold class (the first of them on a tie)."""
    gold_counts = np.asarray(gold_counts, dtype=np.float64)
    matrix = np.zeros((len(gold_counts), len(gold_counts)))
    matrix[int(np.argmax(gold_counts))] = gold_counts
    return matrix


def uniform_matrix(gold_counts: np.ndarray) -> np.ndarray:
    """Each class predicted with probability 1/n, whatever the item."""
    gold_counts = np.asarray(gold_counts, dtype=np.float64)
    return np.tile(gold_counts / len(gold_counts), (len(gold_counts), 1))


def prevalence_matrix(gold_counts: np.ndarray) -> np.ndarray:
    """Each class predicted with its gold share, whatever the item."""
    gold_counts = np.asarray(gold_counts, dtype=np.float64)
    return np.outer(gold_counts / gold_counts.sum(), gold_counts)


def baseline_matrices(gold_counts: np.ndarray) -> dict[str, np.ndarray]:
    """Every reference classifier's expected confusion matrix, by kind."""
    return {
        MAJORITY: majority_matrix(gold_counts),
        UNIFORM: uniform_matrix(gold_counts),
        PREVALENCE: prevalence_matrix(gold_counts),
    }


def baseline_names(gold_counts: np.ndarray, labels: Sequence[str]) -> dict[str, str]:
    """A readable name of each reference classifier, by kind."""
    return {
        MAJORITY: f"Majority class (always {labels[int(np.argmax(gold_counts))]!r})",
        UNIFORM: "Uniform random labels",
        PREVALENCE: "Random labels with the gold prevalence",
    }
