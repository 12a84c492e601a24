"""``python -m scoring.engine.compile_loops`` (run by ``make install``) compiles every loop a
large bootstrap takes, with the same argument types: after it, a bootstrap of 12,284 items
compiles nothing more, so the first one a person runs reads every loop from numba's cache."""

from __future__ import annotations

import numpy as np

from scoring.engine import compiled
from scoring.engine.bootstrap import bootstrap
from scoring.engine.compile_loops import LABELS, TEAMS, compile_loops


def test_a_large_bootstrap_needs_no_loop_the_install_did_not_compile() -> None:
    prepared = compile_loops()
    assert {"ties", "order_statistics", "add_or_multiply", "divide", "rounded", "products"} <= {
        name for name, types in prepared.items() if types
    }
    rng = np.random.default_rng(5)
    gold = rng.choice(len(LABELS), size=12_284, p=[0.32, 0.48, 0.2])
    teams = [np.where(rng.random(gold.size) < 0.6, gold, rng.integers(0, len(LABELS), gold.size)) for _ in range(TEAMS)]
    bootstrap(gold, teams, labels=LABELS, replicates=1000, seed=3)
    assert compiled.signatures() == prepared
