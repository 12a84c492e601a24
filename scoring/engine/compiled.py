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
from types import FunctionType, SimpleNamespace

import numpy as np

from scoring.engine import kernels

OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}
"""Cached beside the module; the interpreter lock let go; a division by 0 gives an infinity or
NaN as numpy's does, never an exception. No fast math: the arithmetic stays as written."""
_loaded = False
_loops: SimpleNamespace | None = None


def load() -> None:
    """Compile (or read from the cache) every function :mod:`scoring.engine.kernels` defines,
    for the rest of this process. The compiled ones are copies that call one another; the
    module keeps its Python functions, which :mod:`scoring.engine.twofold` applies to arrays."""
    global _loaded, _loops
    if _loops is None:
        from numba import njit  # here, so that a process with no large computation never imports it

        namespace = dict(vars(kernels))  # what the copies call by name: each other, numpy, constants
        functions = {}
        for name, function in inspect.getmembers(kernels, inspect.isfunction):
            if function.__module__ == kernels.__name__:
                copy = FunctionType(function.__code__, namespace, name, function.__defaults__)
                copy.__qualname__, copy.__module__ = function.__qualname__, function.__module__
                namespace[name] = functions[name] = njit(**OPTIONS)(copy)
        _loops = SimpleNamespace(**functions)
        _loops.rounded(1, np.zeros(1), np.zeros(1), np.zeros(1))  # numba's start, now rather than mid-pass
    _loaded = True


def loops() -> SimpleNamespace | None:
    """The compiled loops once loaded, else ``None``."""
    return _loops if _loaded else None


def signatures() -> dict[str, list[str]]:
    """Each compiled loop's signatures so far in this process (none before :func:`load`)."""
    if _loops is None:
        return {}
    return {name: [str(types) for types in loop.signatures] for name, loop in vars(_loops).items()}
