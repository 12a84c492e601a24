"""The gunicorn configuration (``config/gunicorn.py``): read as gunicorn reads it, a module of
settings and hooks, with the environment of each case."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

CONFIG = Path(__file__).resolve().parents[2] / "config" / "gunicorn.py"


def settings_with(monkeypatch: pytest.MonkeyPatch, **environment: str) -> dict:
    for name in ("GUNICORN_THREADS", "GUNICORN_WORKERS", "GUNICORN_SWITCH_INTERVAL_MS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONFIG))


@pytest.fixture
def switch_interval():
    """The interpreter's switch interval, put back after the test."""
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


@pytest.mark.usefixtures("switch_interval")
@pytest.mark.parametrize(("environment", "expected_s"), [({}, 0.0005), ({"GUNICORN_SWITCH_INTERVAL_MS": "2"}, 0.002)])
def test_a_threaded_worker_hands_the_interpreter_lock_over_sooner(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], expected_s: float
) -> None:
    config = settings_with(monkeypatch, GUNICORN_THREADS="16", **environment)
    assert config["worker_class"] == "gthread"
    sys.setswitchinterval(0.005)
    config["post_fork"](None, None)
    assert sys.getswitchinterval() == pytest.approx(expected_s)


@pytest.mark.usefixtures("switch_interval")
def test_a_sync_worker_keeps_pythons_switch_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """One thread per process: nobody to hand the lock to."""
    config = settings_with(monkeypatch)
    assert config["worker_class"] == "sync"
    sys.setswitchinterval(0.005)
    config["post_fork"](None, None)
    assert sys.getswitchinterval() == pytest.approx(0.005)
