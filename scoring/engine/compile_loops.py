"""``python -m scoring.engine.compile_loops``: compile the engine's loops
(:mod:`scoring.engine.kernels`) into numba's cache beside them, as ``make install`` does, so that
the first bootstrap a person runs reads them from that cache instead of compiling them first.

It runs a bootstrap at the sizes from which the engine takes its compiled loops (100 teams and
1,000 replicates of three classes: every loop, with the argument types of a large run) on few
items, so that it takes seconds once the loops are compiled; ``tests/scoring/engine/
test_compile_loops.py`` checks that it compiles every loop a large bootstrap calls, with the
same types.
"""

from __future__ import annotations

import numpy as np

from scoring.engine import compiled
from scoring.engine.bootstrap import bootstrap

TEAMS, REPLICATES, ITEMS = 100, 1000, 60
LABELS = ("negative", "neutral", "positive")


def compile_loops() -> dict[str, list[str]]:
    """Run the small bootstrap; each loop's compiled signatures."""
    rng = np.random.default_rng(0)
    gold = rng.integers(0, len(LABELS), ITEMS)
    teams = [np.where(rng.random(ITEMS) < 0.7, gold, rng.integers(0, len(LABELS), ITEMS)) for _ in range(TEAMS)]
    bootstrap(gold, teams, labels=LABELS, replicates=REPLICATES, seed=1)
    return compiled.signatures()


if __name__ == "__main__":
    for name, types in sorted(compile_loops().items()):
        print(f"{name}: {', '.join(types) or 'not compiled'}")
