"""A board as downloadable files: CSV (safe to open in a spreadsheet) and JSON.

Both hold every team (then every baseline, then the teams' majority vote and the oracle) with
every column, raw and calibrated, and its rank; undefined values are empty CSV cells and JSON
``null``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
from pyarrow import csv as arrow_csv

from leaderboard.models import Phase
from leaderboard.selectors.boards import Board, Entry, python_cells
from scoring.engine.aggregate import Aggregate
from scoring.engine.columns import Column
from scoring.engine.ranking import as_array

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a text cell as a formula (CSV injection)."""


ANALYSIS_KINDS = ("majority_vote", "oracle")
"""The kinds of the two rows of a phase's analysis (:data:`~leaderboard.selectors.boards.ANALYSIS_ROWS`)."""


def analysis_status(board: Board) -> str:
    """What a download says of the analysis rows: never ranked, and whether they are current."""
    status = "the teams' runs together, not ranked"
    return status if board.analysis_current else status + "; of earlier scores, being recomputed"


@dataclass(frozen=True)
class ExportTable:
    """A download's rows as columns: each row's name, kind, status and submission, and its
    values and ranks under the board's columns (NaN and 0 where none)."""

    names: list[str]
    kinds: list[str]
    statuses: list[str]
    submissions: list[int | None]
    values: np.ndarray
    ranks: np.ndarray


def export_table(board: Board) -> ExportTable:
    """Teams with a scored submission in board order, each followed by its contrastive runs
    (never ranked), then the others, then the baselines, then the teams' majority vote and the
    oracle (never ranked). The teams' values and ranks are taken from the board's arrays as
    they stand (a board of 10,000 teams makes no entry per team); the few other rows from
    their entries."""
    data, order = board.data, board.order
    indices = [data.index[column.id] for column in board.columns]
    runs: dict[int, list[Entry]] = {}
    for entry in board.contrastive:
        runs.setdefault(entry.team_id, []).append(entry)
    names: list[str] = []
    kinds: list[str] = []
    statuses: list[str] = []
    submissions: list[int | None] = []
    teams: list[int] = []  # the places of the teams' rows
    others: list[tuple[int, Entry]] = []  # the other rows' places and entries

    def add(name: str, kind: str, status: str, submission: int | None, entry: Entry | None = None) -> None:
        if entry is None:
            teams.append(len(names))
        else:
            others.append((len(names), entry))
        names.append(name)
        kinds.append(kind)
        statuses.append(status)
        submissions.append(submission)

    for row, team, submission in zip(
        order.tolist(), data.team_ids[order].tolist(), data.submission_ids[order].tolist(), strict=True
    ):
        add(data.names[row], "team", "scored" if submission else "no scored submission", submission or None)
        for run in runs.get(team, ()):
            add(run.name, "contrastive", f"contrastive run {run.contrastive}, not ranked", run.submission_id, run)
    for entry in board.baselines:
        add(entry.name, "baseline", "baseline, not ranked", None, entry)
    for kind, entry in zip(ANALYSIS_KINDS, board.analysis, strict=False):
        add(entry.name, kind, analysis_status(board), None, entry)
    values = np.full((len(names), len(indices)), np.nan)
    ranks = np.zeros((len(names), len(indices)), dtype=np.int32)
    values[teams] = data.values[np.ix_(order, indices)]
    ranks[teams] = data.ranks[np.ix_(order, indices)]
    for place, entry in others:
        values[place] = as_array([entry.values[column.id] for column in board.columns])
    return ExportTable(names, kinds, statuses, submissions, values, ranks)


def download_name(phase: Phase, extension: str) -> str:
    """``<task>-<phase>-leaderboard.<extension>``, safe as a file name."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", f"{phase.task.slug}-{phase.slug}").strip("-") or "task"
    return f"{stem}-leaderboard.{extension}"


def csv_cell(value: Any) -> Any:
    """A cell a spreadsheet cannot run: text starting with a formula trigger gets a leading
    apostrophe. Numbers stay numbers, negative ones included; None is an empty cell."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


def participants_csv(teams) -> str:
    """One line per member: team, system, user name, e-mail address (spreadsheet-safe)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["team", "system", "removed", "user", "email"])
    for team in teams:
        for membership in team.membership_set.all():
            cells = [team.name, team.system_name, "yes" if team.removed_at else "", membership.user.username]
            writer.writerow([csv_cell(cell) for cell in [*cells, membership.user.email]])
    return out.getvalue()


def board_csv(board: Board) -> bytes:
    """The CSV download: :func:`export_table` with a value and a rank column per board column,
    written by Arrow's CSV writer (10,000 teams × 90 columns: the doubles as text in C++, each
    the shortest text that reads back as the same double; empty where undefined)."""
    table = export_table(board)
    header = ["team", "kind", "status", "submission"]
    arrays = [pa.array([csv_cell(cell) for cell in cells]) for cells in (table.names, table.kinds, table.statuses)]
    arrays.append(pa.array(table.submissions, type=pa.int64()))
    for j, column in enumerate(board.columns):
        header += [column.id, f"{column.id} rank"]
        arrays.append(pa.array(table.values[:, j], mask=np.isnan(table.values[:, j])))
        arrays.append(pa.array(table.ranks[:, j], mask=table.ranks[:, j] == 0))
    out = io.BytesIO()
    arrow_csv.write_csv(pa.Table.from_arrays(arrays, names=[csv_cell(cell) for cell in header]), out)
    return out.getvalue()


def column_json(column: Column | Aggregate) -> dict[str, Any]:
    """A column as the JSON download and the API name it; an overall ranking with the columns
    it is taken ``over``."""
    found = {
        "id": column.id,
        "metric": column.key,
        "class": column.label,
        "name": column.name,
        "symbol": column.symbol,
        "calibrated": column.calibrated,
        "formula": column.formula_text,
    }
    if isinstance(column, Aggregate):
        found["over"] = [chosen.id for chosen in column.columns]
    return found


def board_json(board: Board) -> bytes:
    """The JSON download: :func:`board_data` as text (``null`` for undefined), written by
    orjson (10,000 teams × 90 columns twice: 60 ms, the standard library's encoder 0.9 s)."""
    return orjson.dumps(board_data(board))


def board_data(board: Board, table: ExportTable | None = None, rows: Sequence[int] | None = None) -> dict[str, Any]:
    """The board as plain data: the task, the phase, the columns and every row's values and
    ranks; ``rows``: only these rows of its :func:`export_table` (``table``, if made already)."""
    task, phase = board.task, board.phase
    return {
        "task": {
            "slug": task.slug,
            "title": task.title,
            "parent": task.parent.slug if task.parent_id else None,
            "labels": list(task.labels),
            **({"outputs": task.outputs} if task.outputs else {}),
            "primary_metric": task.primary_metric,
            "counting": phase.counting,
        },
        "phase": {
            "slug": phase.slug,
            "name": phase.name,
            "opens_at": phase.opens_at.isoformat(),
            "closes_at": phase.closes_at.isoformat(),
            "counting": phase.counting,
            "gold_version": phase.gold_version,
            "part": board.part,
            "private_percent": phase.private_percent,
        },
        "columns": [column_json(column) for column in board.columns],
        "rows": table_rows(table or export_table(board), board.columns, rows),
    }


def table_rows(table: ExportTable, columns: Sequence[Column], rows: Sequence[int] | None = None) -> list[dict]:
    """The rows ``rows`` (default all) of a download's table as plain data: name, kind, status,
    submission, and the values and ranks by column id (``None``: undefined, or no rank)."""
    ids = [column.id for column in columns]
    picked = np.arange(len(table.names)) if rows is None else np.asarray(rows, dtype=np.int64)
    cells = python_cells(table.values[picked], table.ranks[picked], columns)
    return [
        {
            "name": table.names[row],
            "kind": table.kinds[row],
            "status": table.statuses[row],
            "submission": table.submissions[row],
            "values": dict(zip(ids, values, strict=True)),
            "ranks": dict(zip(ids, ranks, strict=True)),
        }
        for row, values, ranks in zip(picked.tolist(), *cells, strict=True)
    ]
