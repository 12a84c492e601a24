"""The gunicorn configuration (``config/gunicorn.py``): read as gunicorn reads it, a module of
settings and hooks, with the environment of each case."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

CONFIG = Path(__file__).resolve().parents[2] / "config" / "gunicorn.py"


def settings_with(monkeypatch: pytest.MonkeyPatch, **environment: str) -> dict:
    for name in ("GUNICORN_THREADS", "GUNICORN_WORKERS", "GUNICORN_MAX_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONFIG))


def test_threads_select_the_threaded_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings_with(monkeypatch, GUNICORN_THREADS="16")["worker_class"] == "gthread"
    assert settings_with(monkeypatch)["worker_class"] == "sync"


def test_workers_default_to_twice_the_cores_plus_one_within_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    config = settings_with(monkeypatch, GUNICORN_MAX_WORKERS="3")
    assert config["workers"] == min(2 * config["available_cores"]() + 1, 3)
    assert settings_with(monkeypatch, GUNICORN_WORKERS="7")["workers"] == 7


def test_threaded_workers_hand_the_interpreter_lock_over_sooner(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    before = sys.getswitchinterval()
    try:
        config = settings_with(monkeypatch, GUNICORN_THREADS="16", GUNICORN_SWITCH_INTERVAL_MS="0.25")
        config["post_fork"](None, None)
        assert sys.getswitchinterval() == pytest.approx(0.00025)
        sys.setswitchinterval(before)
        settings_with(monkeypatch)["post_fork"](None, None)  # the sync worker: one thread, no change
        assert sys.getswitchinterval() == before
    finally:
        sys.setswitchinterval(before)
