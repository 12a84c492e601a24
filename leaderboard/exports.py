"""A board as downloadable files: CSV (safe to open in a spreadsheet) and JSON.

Both hold every team (then every baseline, then the teams' majority vote and the oracle) with
every column, raw and calibrated, and its rank; undefined values are empty CSV cells and JSON
``null``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from typing import Any

from leaderboard.models import Phase
from leaderboard.selectors.boards import Board, Entry
from scoring.engine.aggregate import Aggregate
from scoring.engine.columns import Column

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a text cell as a formula (CSV injection)."""


@dataclass(frozen=True)
class ExportRow:
    name: str
    kind: str
    status: str
    submission: int | None
    values: dict[str, Any]
    ranks: dict[str, int | None]


ANALYSIS_KINDS = ("majority_vote", "oracle")
"""The kinds of the two rows of a phase's analysis (:data:`~leaderboard.selectors.boards.ANALYSIS_ROWS`)."""


def analysis_status(board: Board) -> str:
    """What a download says of the analysis rows: never ranked, and whether they are current."""
    status = "the teams' runs together, not ranked"
    return status if board.analysis_current else status + "; of earlier scores, being recomputed"


def export_rows(board: Board) -> list[ExportRow]:
    """Teams with a scored submission in board order, each followed by its contrastive runs
    (never ranked), then the others, then the baselines, then the teams' majority vote and the
    oracle (never ranked)."""

    def team(entry: Entry) -> ExportRow:
        scored = entry.submission_id is not None
        return ExportRow(
            name=entry.name,
            kind="team",
            status="scored" if scored else "no scored submission",
            submission=entry.submission_id,
            values=entry.values,
            ranks=entry.ranks,
        )

    runs: dict[int, list[Entry]] = {}
    for entry in board.contrastive:
        runs.setdefault(entry.team_id, []).append(entry)
    rows = []
    for entry in (*board.scored, *board.unscored):
        rows.append(team(entry))
        rows += [
            ExportRow(
                run.name,
                "contrastive",
                f"contrastive run {run.contrastive}, not ranked",
                run.submission_id,
                run.values,
                dict.fromkeys(run.values),
            )
            for run in runs.get(entry.team_id, ())
        ]
    rows += [
        ExportRow(entry.name, "baseline", "baseline, not ranked", None, entry.values, dict.fromkeys(entry.values))
        for entry in board.baselines
    ]
    rows += [
        ExportRow(entry.name, kind, analysis_status(board), None, entry.values, dict.fromkeys(entry.values))
        for kind, entry in zip(ANALYSIS_KINDS, board.analysis, strict=False)
    ]
    return rows


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


def board_csv(board: Board) -> str:
    header = ["team", "kind", "status", "submission"]
    ids = [column.id for column in board.columns]
    for column in board.columns:
        header += [column.id, f"{column.id} rank"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([csv_cell(cell) for cell in header])
    for row in export_rows(board):
        cells: list[Any] = [csv_cell(cell) for cell in (row.name, row.kind, row.status, row.submission)]
        for key in ids:  # numbers: only None needs a cell of its own (3,000 teams × 84 of them)
            value, rank = row.values[key], row.ranks[key]
            cells += ["" if value is None else value, "" if rank is None else rank]
        writer.writerow(cells)
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


def board_json(board: Board) -> str:
    """The JSON download: :func:`board_data` as text (``null`` for undefined)."""
    return json.dumps(board_data(board), ensure_ascii=False, allow_nan=False)


def board_data(board: Board) -> dict[str, Any]:
    """The board as plain data: the task, the phase, the columns and every row's values and ranks."""
    task, phase = board.task, board.phase
    ids = [column.id for column in board.columns]
    data = {
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
        "rows": [
            {
                "name": row.name,
                "kind": row.kind,
                "status": row.status,
                "submission": row.submission,
                "values": {key: row.values[key] for key in ids},  # numbers, or None: undefined
                "ranks": {key: row.ranks[key] for key in ids},
            }
            for row in export_rows(board)
        ],
    }
    return data
