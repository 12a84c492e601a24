"""The interval job's reading of its runs: a run whose items it checked and named before is read
by name, unpacked only if its values are computed, and the result is a fresh computation's; a
run whose stored matrix changed is checked again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scoring.engine import intervals_job
from scoring.engine.confusion import hard_confusion
from scoring.engine.items import pack_items

LABELS = ["negative", "neutral", "positive"]
MISMATCH = "its items do not give its matrix"


@pytest.fixture
def unpacked(monkeypatch) -> list[int]:
    """How many runs the job unpacked, since the last time it was cleared."""
    calls: list[int] = []
    real = intervals_job.unpack_items

    def counting(data):
        calls.append(1)
        return real(data)

    monkeypatch.setattr(intervals_job, "unpack_items", counting)
    return calls


def run(tmp_path: Path, gold, runs, *, store: Path, keep=None) -> dict:
    """The job on ``runs`` (team, codes, stored matrix), as the site hands it over."""
    directory = Path(tmp_path / f"job-{len(list(tmp_path.glob('job-*')))}")
    directory.mkdir()
    settings = {
        "labels": LABELS,
        "ordinal": False,
        "primary": "macro_recall",
        "replicates": 40,
        "seed": 5,
        "store": str(store),
        "skipped": {},
        "mismatch": MISMATCH,
    }
    intervals_job.write_job(
        directory,
        gold=gold,
        keep=keep,
        runs=[(team, pack_items(codes, len(LABELS)), matrix) for team, codes, matrix in runs],
        teams={team: f"Team {team}" for team, _, _ in runs},
        settings=settings,
    )
    intervals_job.run_job(directory)
    return json.loads((directory / intervals_job.RESULT).read_text())


def test_a_run_checked_before_is_read_by_name_and_the_result_is_a_fresh_computation_s(tmp_path, unpacked):
    rng = np.random.default_rng(12)
    gold = rng.integers(0, 3, 240)
    predictions = {team: np.where(rng.random(240) < 0.6, gold, rng.integers(0, 3, 240)) for team in range(1, 7)}
    predictions[6] = predictions[5].copy()  # twins share their values
    keep = rng.random(240) < 0.7

    def runs_of(codes: dict, matrices: dict | None = None) -> list:
        matrices = matrices or {}
        return [(team, c, matrices.get(team, hard_confusion(c, gold, 3).tolist())) for team, c in codes.items()]

    store = tmp_path / "store"
    first = run(tmp_path, gold, runs_of(predictions), store=store, keep=keep)
    assert len(unpacked) == 6 and first["skipped"] == {}

    unpacked.clear()
    again = run(tmp_path, gold, runs_of(predictions), store=store, keep=keep)
    assert unpacked == [] and again == first

    predictions[3] = np.where(rng.random(240) < 0.8, gold, rng.integers(0, 3, 240))  # a new run
    unpacked.clear()
    after = run(tmp_path, gold, runs_of(predictions), store=store, keep=keep)
    assert len(unpacked) == 1
    assert after == run(tmp_path, gold, runs_of(predictions), store=tmp_path / "fresh", keep=keep)
    assert after["intervals"] != first["intervals"]

    wrong = hard_confusion(predictions[2], gold, 3)
    wrong[0, 0] += 1
    unpacked.clear()
    mismatched = run(tmp_path, gold, runs_of(predictions, {2: wrong.tolist()}), store=store, keep=keep)
    assert len(unpacked) == 1 and mismatched["skipped"] == {"2": MISMATCH}
    assert "2" not in mismatched["intervals"]["raw"]["macro_f1"]

    unpacked.clear()
    shown_all = run(tmp_path, gold, runs_of(predictions), store=store)  # another part shown: checked again
    assert len(unpacked) == 6
    assert shown_all == run(tmp_path, gold, runs_of(predictions), store=tmp_path / "fresh-all")
