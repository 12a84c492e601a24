"""Boards scored from files (``scoring.engine.board``): team names, the gold read once, columns
chosen by id.

What this proves: a team is its file's stem, in argument order, and two files with one stem
are refused naming both; the gold file is read once however many prediction files there are;
every bad prediction file is reported, not just the first; ``--metrics`` ids are looked up,
never split blindly, so a label holding a comma still names its column.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring.engine import board as board_module
from scoring.engine.board import DUPLICATE_TEAM, PredictionFilesError, score_board, team_names
from scoring.engine.columns import Column, ranking_columns
from scoring.engine.io import UNKNOWN_LABEL, InputFileError
from scoring.engine.schemes import UNKNOWN_COLUMN, BoardError, choose_columns

GOLD = "id,label\n1,a\n2,b\n3,a\n"


def write(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(text)
    return str(path)


def test_teams_are_stems_in_argument_order() -> None:
    assert team_names(["runs/zeta.csv", "beta.tsv", "/tmp/x/alpha.v2.csv"]) == ["zeta", "beta", "alpha.v2"]


def test_duplicate_stems_are_refused_naming_both_files() -> None:
    with pytest.raises(BoardError) as caught:
        team_names(["one/team.csv", "other.csv", "two/team.tsv"])
    assert caught.value.template == DUPLICATE_TEAM
    assert caught.value.params == {"first": "one/team.csv", "second": "two/team.tsv", "team": "team"}
    assert "one/team.csv" in str(caught.value) and "two/team.tsv" in str(caught.value)


def test_the_gold_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = board_module.read_labels

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(board_module, "read_labels", counting)
    gold = write(tmp_path, "gold.csv", GOLD)
    predictions = [write(tmp_path, f"team{i}.csv", "id,label\n1,a\n2,a\n3,a\n") for i in range(5)]
    scored = score_board(gold, predictions)
    assert len(calls) == 1
    assert scored.teams == tuple(f"team{i}" for i in range(5))
    assert scored.n_items == 3


def test_every_bad_prediction_file_is_reported(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    good = write(tmp_path, "good.csv", "id,label\n1,a\n2,b\n3,a\n")
    first = write(tmp_path, "first.csv", "id,label\n1,a\n2,z\n3,a\n")
    second = write(tmp_path, "second.csv", "id,label\n1,a\n2,b\n3,y\n")
    with pytest.raises(PredictionFilesError) as caught:
        score_board(gold, [first, good, second])
    errors = caught.value.errors
    assert [type(error) for error in errors] == [InputFileError, InputFileError]
    assert [(error.file, error.line, error.template) for error in errors] == [
        (first, 3, UNKNOWN_LABEL),
        (second, 4, UNKNOWN_LABEL),
    ]


def test_columns_are_chosen_by_id_in_the_given_order() -> None:
    available = ranking_columns(("neg", "pos"), calibrated=None)
    chosen = choose_columns("kappa_c,recall[pos], macro_recall", available)
    assert chosen == [Column("kappa", calibrated=True), Column("recall", "pos"), Column("macro_recall")]


def test_a_label_with_a_comma_still_names_its_column() -> None:
    available = ranking_columns(("a,b", "a"), calibrated=None)
    assert choose_columns("recall[a,b],recall[a]_c", available) == [
        Column("recall", "a,b"),
        Column("recall", "a", calibrated=True),
    ]


def test_an_unknown_column_is_refused() -> None:
    with pytest.raises(BoardError) as caught:
        choose_columns("accuracy,acuracy_c", ranking_columns(("a", "b"), calibrated=None))
    assert caught.value.template == UNKNOWN_COLUMN
    assert caught.value.params["column"] == "acuracy_c"
    assert "accuracy_c" in caught.value.params["known"]
