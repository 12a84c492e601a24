"""The demo's multi-label task, in the form of SemEval-2018 Task 1's emotion classification (E-c):
each tweet expresses any number of 11 emotions, or none, and a run says, for every tweet, which.

The data are generated, and the task says so on its pages: no package or public repository here
provides the tweets and labels of a multi-label shared task. Each emotion is present in a share of
the tweets chosen for the demo (:data:`SHARES`: some common, two rare), independently; each team
finds an emotion that is present with its own recall and marks one that is absent with its own
false-alarm rate (:data:`TEAMS`), so the teams differ the way systems do: one marks many emotions,
one few, one never the rare ones, and the metrics rank them differently.
"""

from __future__ import annotations

import numpy as np

EMOTIONS = (
    "anger",
    "anticipation",
    "disgust",
    "fear",
    "joy",
    "love",
    "optimism",
    "pessimism",
    "sadness",
    "surprise",
    "trust",
)
"""The 11 emotions of SemEval-2018 Task 1 E-c, one 0/1 column each."""
SHARES = (0.36, 0.14, 0.37, 0.17, 0.36, 0.11, 0.30, 0.12, 0.30, 0.05, 0.05)
"""The share of tweets expressing each emotion in the generated gold."""
N_ITEMS = 3000

TEAMS: dict[str, tuple[float, float, tuple[str, ...]]] = {
    "A": (0.72, 0.05, ()),
    "B": (0.86, 0.16, ()),
    "C": (0.50, 0.02, ()),
    "D": (0.78, 0.06, ("surprise", "trust")),
    "E": (0.64, 0.09, ()),
    "F": (0.40, 0.10, ("anticipation", "love", "pessimism", "surprise", "trust")),
}
"""Each team's recall of a present emotion, its false-alarm rate on an absent one, and the
emotions it never marks."""

DESCRIPTION = (
    "Say which of 11 emotions a tweet expresses: any number of them, or none. The task has the form of "
    "SemEval-2018 Task 1, subtask E-c, which ranked teams by the Jaccard index (the mean over tweets of the "
    "emotions both marked over the emotions either marked) with micro and macro F1 beside it; here every "
    "metric ranks them too, each emotion's whole suite averaged over the emotions, raw and calibrated. "
    "The tweets, labels and runs are generated for the demo: no public data of a multi-label shared task "
    "ships with it."
)
PHASE_DESCRIPTION = (
    "A test set of {n:,} generated tweets. Each team's run is drawn label by label: a present emotion found with "
    "the team's recall, an absent one marked with its false-alarm rate; one team marks many emotions, one few, "
    "and two never mark the rare ones. So every number here describes these draws, not a real system."
)


def gold(rng: np.random.Generator) -> np.ndarray:
    """Items × emotions, 1 where present."""
    return (rng.random((N_ITEMS, len(EMOTIONS))) < np.array(SHARES)).astype(np.uint8)


def run(codes: np.ndarray, team: str, rng: np.random.Generator) -> np.ndarray:
    """A team's run on ``codes`` (items × emotions), drawn as :data:`TEAMS` says."""
    recall, false_alarm, never = TEAMS[team]
    chance = np.where(codes == 1, recall, false_alarm)
    chance[:, [EMOTIONS.index(emotion) for emotion in never]] = 0.0
    return (rng.random(codes.shape) < chance).astype(np.uint8)


def as_csv(ids: list[str], codes: np.ndarray) -> bytes:
    lines = [",".join(("id", *EMOTIONS)), *(",".join((i, *map(str, row))) for i, row in zip(ids, codes, strict=True))]
    return ("\n".join(lines) + "\n").encode()
