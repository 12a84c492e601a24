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
    default = settings_with(monkeypatch)
    assert (default["worker_class"], default["threads"]) == ("gthread", 16)
    assert settings_with(monkeypatch, GUNICORN_THREADS="1")["worker_class"] == "sync"


def test_workers_default_to_twice_the_cores_plus_one_within_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    config = settings_with(monkeypatch, GUNICORN_MAX_WORKERS="3")
    assert config["workers"] == min(2 * config["available_cores"]() + 1, 3)
    config = settings_with(monkeypatch)
    assert config["workers"] * config["threads"] < 100  # PostgreSQL's default max_connections
    assert settings_with(monkeypatch, GUNICORN_WORKERS="7")["workers"] == 7
