"""Whether this process has loaded the engine's compiled loops (:mod:`scoring.engine.kernels`).

Loading them costs about 1 s the first time in a process (numba's start, the loops read from
its cache beside the module, or compiled there once): worth it for a large computation (a
bootstrap's values or sorts of many teams), not for a few values. So a pass that has a large
computation ahead calls :func:`load`, and from then on the engine's routes that have a
compiled loop (:mod:`scoring.engine.twofold`, :class:`scoring.engine.rank_order.Ties`) take
it; a process that has none (a report, one new team's values) never imports numba. Both
routes give the same numbers, bit for bit (``tests/scoring/engine/test_kernels.py``).
"""

from __future__ import annotations

import inspect
from types import ModuleType

import numpy as np

from scoring.engine import kernels

OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}
"""Cached beside the module; the interpreter lock let go; a division by 0 gives an infinity or
NaN as numpy's does, never an exception. No fast math: the arithmetic stays as written."""
_loaded = False


def load() -> None:
    """Compile (or read from the cache) every function :mod:`scoring.engine.kernels` defines,
    for the rest of this process (the module's names: :mod:`scoring.engine.twofold` keeps the
    Python functions it imported)."""
    global _loaded
    if _loaded:
        return
    from numba import njit  # here, so that a process with no large computation never imports it

    for name, function in inspect.getmembers(kernels, inspect.isfunction):
        if function.__module__ == kernels.__name__:  # the loops and the steps they call by name
            setattr(kernels, name, njit(**OPTIONS)(function))
    kernels.rounded(1, np.zeros(1), np.zeros(1), np.zeros(1))  # numba's start, now rather than mid-pass
    _loaded = True


def loops() -> ModuleType | None:
    """The compiled loops once loaded, else ``None``."""
    return kernels if _loaded else None
