"""What the teams of a phase got wrong together, as its analysis page, its downloads and the API
show it (computed in the background by :mod:`leaderboard.analysis`; here only read).

The page and the API read the same cached pieces: the summary (the majority vote and the oracle
against the winner under every column, the items no team got right per gold label, kappa and its
clustering, the teams left out) for everyone who sees the board, and the hardest items, which
hold gold labels, for those :func:`~leaderboard.permissions.can_view_hardest_items` allows.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from leaderboard import charts, errors, exports
from leaderboard.analysis import AGREEMENT_TEAMS, hardest_labels
from leaderboard.models import DerivedState, PartScores, Phase, PhaseAnalysis
from leaderboard.pages.results import board_data_of
from leaderboard.results_cache import cached
from leaderboard.selectors.boards import ANALYSIS_ROWS, BoardData, analysis_stamp, columns_of
from scoring.engine.analysis import HARDEST_AT_LEAST, LINKAGE
from scoring.engine.columns import Column
from scoring.engine.metrics import Value
from scoring.engine.ranking import goodness

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
    if phase.task.scheme.has_outputs:
        return summary | {"not_for_outputs": str(errors.ANALYSIS_NOT_FOR_OUTPUTS)}
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
    labels = phase.task.labels
    vote, oracle = _scores(result["majority_vote"]), _scores(result["oracle"])
    agreement = result["agreement"]
    clustered = [name(team) for team in agreement["teams"]]
    order = agreement["order"]
    kappa = agreement["kappa"]
    summary |= {
        "vote_ties": result["majority_vote"]["ties"],
        "majority_vote": result["majority_vote"],
        "oracle": result["oracle"],
        "versus": [_versus(data, column, vote, oracle) for column in columns_of(phase.task, calibrated=None)],
        "unsolved": [
            (label, items, unsolved, unsolved / items if items else None)
            for label, items, unsolved in zip(labels, result["gold_counts"], result["unsolved"], strict=True)
        ],
        "n_items": result["n_items"],
        "n_unsolved": sum(result["unsolved"]),
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


def _hardest(phase: Phase) -> dict[str, Any] | None:
    """Every hardest item (id, gold label, how many teams got it right, the teams' votes per
    label), and each analysed team's label of each (names as now)."""
    data = board_data_of(phase)
    row, _, _ = _stored(phase, data)
    if row is None or not row.result.get("hardest"):
        return None
    labels = phase.task.labels
    names = {int(team): name for team, name in zip(data.team_ids, data.names, strict=True)}
    codes = hardest_labels(PhaseAnalysis.objects.get(pk=row.pk))
    return {
        "labels": labels,
        "items": [
            {"id": item["id"], "gold": labels[item["gold"]], "right": item["right"], "votes": item["votes"]}
            for item in row.result["hardest"]
        ],
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
    labels = hardest["labels"]
    for h, item in enumerate(hardest["items"]):
        cells = (item["id"], item["gold"], item["right"], *(labels[code] for code in hardest["team_labels"][:, h]))
        writer.writerow([exports.csv_cell(cell) for cell in cells])
    return out.getvalue()


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
    report_keys = ("confusion_matrix", "metrics", "calibrated", "per_class", "calibrated_per_class")
    found |= {
        "majority_vote": {
            "ties": vote["ties"],
            **{key: vote[key] for key in report_keys},
            "would_rank": _ranks(summary["versus"], "vote"),
        },
        "oracle": {
            "accuracy": oracle["metrics"]["accuracy"],
            "macro_recall": oracle["metrics"]["macro_recall"],
            **{key: oracle[key] for key in report_keys},
            "would_rank": _ranks(summary["versus"], "oracle"),
        },
        "unsolved": {label: unsolved for label, _, unsolved, _ in summary["unsolved"]},
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
        found["hardest"] = [
            {
                **{key: item[key] for key in ("id", "gold", "right")},
                "votes": dict(zip(hardest["labels"], item["votes"], strict=True)),
            }
            for item in hardest["items"]
        ]
    return found
