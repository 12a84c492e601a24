"""Whether this process has loaded the engine's compiled loops (:mod:`scoring.engine.kernels`).

Loading them costs about 0.7 s the first time in a process (numba's start, the loops read from
its cache beside the module, or compiled there once): worth it for a large computation (a
bootstrap's values or sorts of many teams), not for a few values. So a pass that has a large
computation ahead calls :func:`load`, and from then on the engine's routes that have a
compiled loop (:mod:`scoring.engine.twofold`, :class:`scoring.engine.rank_order.Ties`) take
it; a process that has none (a report, one new team's values) never imports numba. Both
routes give the same numbers, bit for bit (``tests/scoring/engine/test_kernels.py``).
"""

from __future__ import annotations

from types import ModuleType

_loops: ModuleType | None = None


def load() -> None:
    """Load the compiled loops for the rest of this process."""
    global _loops
    if _loops is None:
        import numpy as np

        from scoring.engine import kernels

        kernels.rounded(1, np.zeros(1), np.zeros(1), np.zeros(1))  # numba's start, now rather than mid-pass
        _loops = kernels


def loops() -> ModuleType | None:
    """The compiled loops once loaded, else ``None``."""
    return _loops
