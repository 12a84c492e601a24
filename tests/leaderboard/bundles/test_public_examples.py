"""The public example bundles of CodaLab and Codabench (github.com/codalab/competition-examples)
read into plans.

They are not in this repository: set ``COMPETITION_EXAMPLES`` to a folder of their zips (named
as in that repository, ``/`` written ``_``) to run these tests; without it they are skipped.

What this proves, on the platforms' own bundles: every one is read without an error (what
cannot come over is listed, never a crash); the classification bundles whose reference data
are labels files (Iris on both platforms, Codabench's wheat seeds and Mini-MNIST) are ready to
import with the label sets and item counts of their reference files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leaderboard.bundles.plan import ImportOptions
from leaderboard.bundles.reading import open_bundle, plan_of

FOLDER = Path(os.environ.get("COMPETITION_EXAMPLES", "/nonexistent"))
BUNDLES = sorted(FOLDER.glob("*.zip")) if FOLDER.is_dir() else []
READY = {
    "codalab_Iris_iris_competition_bundle.zip": (("0", "1", "2"), [15, 30]),
    "codabench_iris_bundle.zip": (("0", "1", "2"), [15, 30]),
    "codabench_wheat_seeds_results_submission_bundle.zip": (("0", "1", "2"), [40, 53]),
    "codabench_Mini-MNIST_Mini-MNIST-Bundle.zip": (tuple(str(digit) for digit in range(10)), [50]),
}
pytestmark = [pytest.mark.django_db, pytest.mark.skipif(not BUNDLES, reason="COMPETITION_EXAMPLES is not set")]


@pytest.mark.parametrize("path", BUNDLES, ids=lambda path: path.name)
def test_every_public_example_is_read(path):
    plan = plan_of(open_bundle(path.read_bytes(), name=path.name), ImportOptions())
    assert plan.title and plan.phases and plan.notes
    if path.name in READY:
        labels, items = READY[path.name]
        assert plan.ready and plan.labels == labels and [phase.gold_items for phase in plan.phases] == items
