"""What the teams of a phase got wrong together, as its analysis page, its downloads and the API
show it (computed in the background by :mod:`leaderboard.analysis`; here only read).

The page and the API read the same cached pieces: the summary (the majority vote and the oracle
against the winner under every column, the items no team got right per gold label, kappa and its
clustering, the teams left out) for everyone who sees the board, and the hardest items, which
hold gold labels, for those :func:`~leaderboard.permissions.can_view_hardest_items` allows.

A task with several outputs shows the same (rules: :mod:`scoring.engine.analysis`), with the
exact-match oracle beside the oracle, the items no team got right per output and gold label, and
each hardest item's labels as text (:func:`scoring.engine.outputs_analysis.labels_text`); its
JSON gives each output's label, and the teams' votes per output and label.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from leaderboard import charts, exports
from leaderboard.analysis import AGREEMENT_TEAMS, hardest_labels
from leaderboard.models import DerivedState, PartScores, Phase, PhaseAnalysis
from leaderboard.pages.results import board_data_of
from leaderboard.results_cache import cached
from leaderboard.selectors.boards import ANALYSIS_ROWS, BoardData, analysis_stamp, columns_of
from scoring.engine.analysis import HARDEST_AT_LEAST, LINKAGE, labels_json, per_label_json, unsolved_rows
from scoring.engine.columns import Column
from scoring.engine.label_sets import PRESENT
from scoring.engine.metrics import Value
from scoring.engine.outputs_analysis import labels_text
from scoring.engine.ranking import goodness
from scoring.engine.schemes import Scheme

HARDEST_SHOWN = 100
"""The hardest items the page lists (the CSV and the JSON hold every one)."""
CURRENT, RECOMPUTING, FAILED, NONE = "current", "recomputing", "failed", "none"
"""Whether a phase's analysis is of its current scores, of earlier ones while it is recomputed
or because its computation for the current ones failed, or not there at all (yet)."""
GONE = "a team no longer on the board"


@dataclass(frozen=True)
class Versus:
    """One column of "would the teams together beat the winner?": the leader (or leaders, tied),
    its value, and the majority vote's and the oracle's values with the rank each would take."""

    column: Column
    leaders: list[str]
    leader_value: Value
    vote: Value
    vote_rank: int | None
    oracle: Value
    oracle_rank: int | None

    @property
    def vote_beats_leader(self) -> bool:
        return self.vote_rank == 1 and self.vote != self.leader_value


def would_rank(data: BoardData, column: Column, value: Value) -> int | None:
    """The competition rank ``value`` would take among the teams under ``column`` without taking a
    place from any (:func:`scoring.engine.ranking.rank_among`, at once over the board's arrays)."""
    if value is None:
        return None
    better = goodness(data.column_array(column), column.direction) > goodness([value], column.direction)[0]
    return 1 + int(np.count_nonzero(better))


def _versus(data: BoardData, column: Column, vote: PartScores, oracle: PartScores) -> Versus:
    ranks = data.ranks[:, data.index[column.id]]
    leaders = [data.names[row] for row in np.flatnonzero(ranks == 1)]
    leader = int(np.flatnonzero(ranks == 1)[0]) if leaders else None
    vote_value, oracle_value = column.value(vote), column.value(oracle)
    return Versus(
        column=column,
        leaders=leaders,
        leader_value=None if leader is None else data.value(leader, column),
        vote=vote_value,
        vote_rank=would_rank(data, column, vote_value),
        oracle=oracle_value,
        oracle_rank=would_rank(data, column, oracle_value),
    )


def _scores(stored: dict) -> PartScores:
    return PartScores(**{name: stored.get(name) for name in PartScores.__dataclass_fields__})


def _stored(phase: Phase, data: BoardData) -> tuple[PhaseAnalysis | None, str, DerivedState | None]:
    """The phase's stored analysis of the part its board shows, its status and its state."""
    row = PhaseAnalysis.objects.filter(phase=phase).defer("board_values", "hardest_labels").first()
    if row is None or row.computed_at is None or row.part != data.part or row.result is None:
        return None, NONE, None
    state = row.state(analysis_stamp(data, phase), pause_s=settings.ANALYSIS_EVERY_S, now=timezone.now())
    return row, CURRENT if state.current else FAILED if state.failure else RECOMPUTING, state


def _summary(phase: Phase) -> dict[str, Any]:
    """The cached summary (see the module): plain data, names as the board names the teams now."""
    data = board_data_of(phase)
    row, status, state = _stored(phase, data)
    n_scored = int(data.scored.sum())
    summary: dict[str, Any] = {"status": status, "n_scored": n_scored, "applies": False}
    if row is None:
        return summary
    summary |= {"failure": state.failure, "due_at": state.due_at}
    result = row.result
    names = {int(team): name for team, name in zip(data.team_ids, data.names, strict=True)}

    def name(team: int | str) -> str:
        return names.get(int(team), GONE)

    summary |= {
        "computed_at": row.computed_at,
        "n_teams": len(result["teams"]),
        "skipped": [(name(team), reason) for team, reason in result.get("skipped", {}).items()],
        "applies": len(result["teams"]) > 1,
    }
    if not summary["applies"]:
        return summary
    scheme = phase.task.scheme
    vote, oracle = _scores(result["majority_vote"]), _scores(result["oracle"])
    agreement = result["agreement"]
    clustered = [name(team) for team in agreement["teams"]]
    order = agreement["order"]
    kappa = agreement["kappa"]
    rows = unsolved_rows(
        labels=scheme.labels, outputs=scheme.outputs, gold_counts=result["gold_counts"], unsolved=result["unsolved"]
    )
    outputs = [output.name for output in scheme.outputs]
    summary |= {
        "vote_ties": result["majority_vote"]["ties"],
        "ties_per_output": list(zip(outputs, result["majority_vote"].get("ties_per_output", ()), strict=True)),
        "majority_vote": result["majority_vote"],
        "oracle": result["oracle"],
        "exact_match_one_run": result["oracle"].get("exact_match_one_run"),
        "versus": [_versus(data, column, vote, oracle) for column in columns_of(phase.task, calibrated=None)],
        "unsolved": [
            (row_name, items, unsolved, unsolved / items if items else None) for row_name, items, unsolved in rows
        ],
        "unsolved_counts": result["unsolved"],
        "n_items": result["n_items"],
        "n_unsolved": sum(1 for item in result["hardest"] if item["right"] == 0),
        "n_hardest": len(result["hardest"]),
        "agreement_teams": [clustered[i] for i in order],
        "kappa": [[kappa[i][j] for j in order] for i in order],
        "merges": [
            ([clustered[i] for i in merge["left"]], [clustered[i] for i in merge["right"]], merge["kappa"])
            for merge in agreement["merges"]
        ],
        "agreement_all": len(agreement["teams"]) == len(result["teams"]),
        "heatmap": charts.kappa_heatmap(
            teams=[clustered[i] for i in order], kappa=[[kappa[i][j] for j in order] for i in order]
        ),
    }
    return summary


def analysis_summary(phase: Phase) -> dict[str, Any]:
    """The phase's analysis as everyone who sees its board may read it (cached)."""
    return cached(phase, "analysis", (phase.shown_part(),), lambda: _summary(phase))


def vote_columns(scheme: Scheme) -> list[tuple[int, int, str]]:
    """The hardest items' columns of votes on the page: (output, label code, heading) for each
    label of the label column; of several outputs, for each label of each output ("output:
    label"), of a 0/1 label only the teams that said present (under its name)."""
    if not scheme.outputs:
        return [(0, code, label) for code, label in enumerate(scheme.labels)]
    return [
        (index, code, output.name if output.is_label else f"{output.name}: {label}")
        for index, output in enumerate(scheme.outputs)
        for code, label in enumerate(output.labels)
        if not output.is_label or code == PRESENT
    ]


def _item(item: dict, scheme: Scheme, columns: list[tuple[int, int, str]]) -> dict[str, Any]:
    """A hardest item as the page and the API show it: its gold label (of several outputs, each
    output's, and as text), and the teams' votes per label (per output and label), and as the
    page's cells."""
    gold, votes, kind = item["gold"], item["votes"], {"labels": scheme.labels, "outputs": scheme.outputs}
    return {
        "id": item["id"],
        "gold": labels_json(gold, **kind),
        "gold_text": labels_text(gold, **kind),
        "right": item["right"],
        "votes": per_label_json(votes, **kind),
        "vote_cells": [(votes if scheme.outputs else [votes])[index][code] for index, code, _ in columns],
    }


def _hardest(phase: Phase) -> dict[str, Any] | None:
    """Every hardest item (id, gold label, how many teams got it right, the teams' votes per
    label), and each analysed team's label of each (names as now)."""
    data = board_data_of(phase)
    row, _, _ = _stored(phase, data)
    if row is None or not row.result.get("hardest"):
        return None
    scheme = phase.task.scheme
    columns = vote_columns(scheme)
    names = {int(team): name for team, name in zip(data.team_ids, data.names, strict=True)}
    codes = hardest_labels(PhaseAnalysis.objects.get(pk=row.pk))
    return {
        "scheme": scheme,
        "vote_headings": [heading for *_, heading in columns],
        "items": [_item(item, scheme, columns) for item in row.result["hardest"]],
        "teams": [names.get(team, GONE) for team in row.result["teams"]],
        "team_labels": codes,
    }


def hardest_items(phase: Phase) -> dict[str, Any] | None:
    """The hardest items (cached). Call it only for someone who may see them."""
    return cached(phase, "analysis-hardest", (phase.shown_part(),), lambda: _hardest(phase))


def analysis_page(*, phase: Phase, show_hardest: bool) -> dict[str, Any]:
    """The analysis page: the summary, and the first :data:`HARDEST_SHOWN` hardest items when
    ``show_hardest``."""
    hardest = hardest_items(phase) if show_hardest else None
    summary = analysis_summary(phase)
    return {
        "task": phase.task,
        "phase": phase,
        **summary,
        "row_names": ANALYSIS_ROWS,
        "agreement_limit": AGREEMENT_TEAMS,
        "linkage": LINKAGE,
        "hardest_at_least": HARDEST_AT_LEAST,
        "show_hardest": show_hardest,
        "hardest": None if hardest is None else hardest["items"][:HARDEST_SHOWN],
        "vote_headings": None if hardest is None else hardest["vote_headings"],
        "hardest_shown": HARDEST_SHOWN,
        "versus_groups": [
            (group, [row for row in summary.get("versus", []) if row.column.calibrated == calibrated])
            for group, calibrated in (("Raw", False), ("Prevalence-calibrated", True))
        ],
    }


def hardest_csv(phase: Phase) -> str | None:
    """Every hardest item, one line each: id, gold label, how many teams got it right, then each
    analysed team's label (a column per team); ``None`` without an analysis. Call it only for
    someone who may see them."""
    hardest = hardest_items(phase)
    if hardest is None:
        return None
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([exports.csv_cell(cell) for cell in ("id", "gold", "right", *hardest["teams"])])
    scheme = hardest["scheme"]
    for h, item in enumerate(hardest["items"]):
        predicted = (
            labels_text(codes, labels=scheme.labels, outputs=scheme.outputs)
            for codes in hardest["team_labels"][:, h].tolist()
        )
        writer.writerow([exports.csv_cell(cell) for cell in (item["id"], item["gold_text"], item["right"], *predicted)])
    return out.getvalue()


REPORT_KEYS = ("confusion_matrix", "metrics", "calibrated", "per_class", "calibrated_per_class")
"""What the API gives of a stored report (of a task with several outputs, of each output's)."""


def _report(stored: dict) -> dict[str, Any]:
    """A stored report as the API gives it: of several outputs, the means and item metrics, then
    each output's report under ``outputs``."""
    if stored.get("output_scores") is None:
        return {key: stored[key] for key in REPORT_KEYS}
    outputs = {name: {key: scores[key] for key in REPORT_KEYS} for name, scores in stored["output_scores"].items()}
    return {"metrics": stored["metrics"], "calibrated": stored["calibrated"], "outputs": outputs}


def _ranks(rows: list[Versus], which: str) -> dict[str, dict[str, int | None]]:
    """``would_rank`` keyed as the CLI keys it: raw column ids in both sections."""
    return {
        section: {
            (row.column.counterpart().id if row.column.calibrated else row.column.id): getattr(row, f"{which}_rank")
            for row in rows
            if row.column.calibrated == (section == "calibrated")
        }
        for section in ("raw", "calibrated")
    }


def analysis_api(*, phase: Phase, show_hardest: bool) -> dict[str, Any]:
    """The analysis as the API and the JSON download give it: the CLI's ``analysis`` object
    (:mod:`scoring.__main__`) where the site has the same, with the status and the teams left
    out; the hardest items with the teams' votes per label (each team's label is in the CSV),
    and only when ``show_hardest`` (else ``None``, as everything else with fewer than two teams)."""
    summary = analysis_summary(phase)
    found: dict[str, Any] = {
        "phase": phase.slug,
        "status": summary["status"],
        "computed_at": summary["computed_at"].isoformat() if summary.get("computed_at") else None,
        "failure": summary.get("failure") or None,
        "teams": summary.get("n_teams", 0),
        "skipped": dict(summary.get("skipped", [])),
        **dict.fromkeys(("majority_vote", "oracle", "unsolved", "agreement", "hardest")),
    }
    if not summary["applies"]:
        return found
    vote, oracle = summary["majority_vote"], summary["oracle"]
    scheme = phase.task.scheme
    ties, exact_match = {}, {}
    if scheme.outputs:
        ties = {"ties_per_output": dict(summary["ties_per_output"])}
        exact_match = {"exact_match_one_run": summary["exact_match_one_run"]}
    found |= {
        "majority_vote": {
            "ties": vote["ties"],
            **ties,
            **_report(vote),
            "would_rank": _ranks(summary["versus"], "vote"),
        },
        "oracle": {
            "accuracy": oracle["metrics"]["accuracy"],
            "macro_recall": oracle["metrics"]["macro_recall"],
            **exact_match,
            **_report(oracle),
            "would_rank": _ranks(summary["versus"], "oracle"),
        },
        "unsolved": per_label_json(summary["unsolved_counts"], labels=scheme.labels, outputs=scheme.outputs),
        "agreement": {
            "teams": summary["agreement_teams"],
            "kappa": summary["kappa"],
            "clustering": {
                "method": LINKAGE,
                "order": summary["agreement_teams"],
                "merges": [{"left": left, "right": right, "kappa": kappa} for left, right, kappa in summary["merges"]],
            },
        },
    }
    hardest = hardest_items(phase) if show_hardest else None
    if hardest is not None:
        found["hardest"] = [{key: item[key] for key in ("id", "gold", "right", "votes")} for item in hardest["items"]]
    return found
