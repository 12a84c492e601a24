"""What the teams of a phase got wrong together: its analysis, computed in the background.

The engine does the work (:func:`scoring.engine.analysis.analyse`: the majority vote of the
teams and the oracle, each scored under every metric; the items no team got right; kappa
between the teams and its clustering; the hardest items); here is when it runs, on what, and
where the result is kept. Who may read the hardest items, which hold gold labels, is
:func:`leaderboard.permissions.can_view_hardest_items`.

**On what.** Each team's counting submission, as the board counts it, through the per-item
predictions stored with its scores (:attr:`Submission.items`; a probability file as its arg-max
labels, a tie to the first label), on the part of a split test set the board shows. A team is
left out, with the reason shown beside it, when its run is being re-scored against a new gold
file, when its file no longer reads against the gold, or when its items do not give its stored
confusion matrix. Kappa and the clustering are of the :data:`AGREEMENT_TEAMS` teams first under
the primary metric (a heatmap of thousands of teams shows nothing; kappa grows with the square
of their number); everything else is of every team.

**When.** As every derived result of a phase (:mod:`leaderboard.derived`): asked for by the
write that changes its counting scores, computed off the request path, at most once every
``settings.ANALYSIS_EVERY_S`` per phase (during a rush the scores change every second);
meanwhile its page and the board's two rows say they are of earlier scores.

**Where.** One :class:`~leaderboard.models.PhaseAnalysis` row per phase, stamped with the digest
of what it was computed from (:func:`leaderboard.selectors.boards.analysis_stamp`): the result,
the majority vote's and the oracle's values packed for the board, and each team's label of each
hardest item for the organisers' CSV. Storing a result raises the task's scores version, so
pages show it at once; a board built from other scores shows the stored rows marked as stale.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from leaderboard.models import ALL_ITEMS, PartScores, Phase, PhaseAnalysis, Scored, Submission, stored_scores
from leaderboard.selectors.boards import BoardData, columns_of, primary_column
from leaderboard.uploads import kept_gold
from scoring.engine.analysis import Analysis, analyse, hard_labels
from scoring.engine.confusion import hard_confusions
from scoring.engine.io import InputFileError, LabelFile, read_predictions
from scoring.engine.items import pack_items, reproduces, unpack_items
from scoring.engine.scorer import aligned_items
from scoring.engine.split import part_masks

AGREEMENT_TEAMS = 50
"""The teams whose kappa the analysis computes and clusters: the first under the primary metric
(as the rank chart of the disagreement page draws the first 50)."""
CHUNK = 200
"""Runs read from the database at a time: their items are turned into labels as they come, so
that the job holds one byte per team and item, whatever the files were."""

SKIPPED_RESCORING = "being re-scored against the new gold file"
SKIPPED_UNREADABLE = "its file no longer reads against the gold file"
SKIPPED_MISMATCH = "its per-item predictions do not give its stored confusion matrix"


# --- computing -----------------------------------------------------------------------------------


def _items_of(submission: Submission, *, gold: LabelFile) -> np.ndarray | None:
    """A counting run's per-item predictions; items missing (scored before they were kept) are
    read from its stored file; ``None`` when it no longer reads against the gold."""
    items = submission.item_predictions()
    if items is not None:
        return items
    try:
        content = bytes(submission.file.content)
        return aligned_items(read_predictions(content, gold=gold, name=submission.file.name))
    except InputFileError:
        return None


def _checked_labels(runs: list[tuple[int, Submission, np.ndarray]], gold: LabelFile) -> dict[int, np.ndarray | str]:
    """Each run's label per item (a probability file's arg-max), or why it has none: its items
    must give its stored confusion matrix exactly. Class codes are counted all at once
    (:func:`~scoring.engine.confusion.hard_confusions`), probability rows one run at a time."""
    found: dict[int, np.ndarray | str] = {}
    hard = [(team, run, items) for team, run, items in runs if items.ndim == 1]
    matrices = hard_confusions(np.stack([items for *_, items in hard]), gold.codes, len(gold.labels)) if hard else []
    for (team, run, items), matrix in zip(hard, matrices, strict=True):
        same = np.array_equal(matrix.astype(np.float64), np.asarray(run.confusion_matrix, dtype=np.float64))
        found[team] = items if same else SKIPPED_MISMATCH
    for team, run, items in runs:
        if items.ndim == 2:
            same = reproduces(gold.codes, items, run.confusion_matrix)
            found[team] = hard_labels(items) if same else SKIPPED_MISMATCH
    return found


def _team_labels(
    phase: Phase, data: BoardData, gold: LabelFile, keep: np.ndarray | None
) -> tuple[list[int], np.ndarray, dict[str, str]]:
    """The analysed teams (ids, in the board's order), their labels (teams × items kept) and the
    teams left out with why. The runs are read :data:`CHUNK` at a time."""
    counting = [(int(team), int(pk)) for team, pk in zip(data.team_ids, data.submission_ids, strict=True) if pk]
    n_items = len(gold.codes) if keep is None else int(keep.sum())
    labels = np.empty((len(counting), n_items), dtype=np.min_scalar_type(max(len(gold.labels) - 1, 0)))
    fields = ("id", "team_id", "phase_id", "items", "confusion_matrix", "file_id", "scored_gold_version")
    teams, skipped = [], {}
    for start in range(0, len(counting), CHUNK):
        chunk = dict(counting[start : start + CHUNK])
        stored = {run.team_id: run for run in Submission.objects.filter(pk__in=chunk.values()).only(*fields)}
        read = []
        for team in chunk:
            run = stored.get(team)
            if run is None or run.scored_gold_version != phase.gold_version:  # its items are of the old gold
                skipped[str(team)] = SKIPPED_RESCORING
            elif (items := _items_of(run, gold=gold)) is None:
                skipped[str(team)] = SKIPPED_UNREADABLE
            else:
                read.append((team, run, items))
        checked = _checked_labels(read, gold)
        for team, _, _ in read:
            found = checked[team]
            if isinstance(found, str):
                skipped[str(team)] = found
                continue
            labels[len(teams)] = found if keep is None else found[keep]
            teams.append(team)
    return teams, labels[: len(teams)], skipped


def _agreement_teams(data: BoardData, phase: Phase, teams: list[int]) -> list[int]:
    """The positions among ``teams`` of the first :data:`AGREEMENT_TEAMS` under the primary metric."""
    position = {team: p for p, team in enumerate(teams)}
    ordered = [int(data.team_ids[row]) for row in data.order(primary_column(phase.task))]
    return [position[team] for team in ordered if team in position][:AGREEMENT_TEAMS]


def analysis_result(analysis: Analysis, *, teams: list[int], hardest_ids: list[str]) -> dict[str, Any]:
    """The stored result (ids of teams, positions of items; see :class:`PhaseAnalysis`);
    ``hardest_ids`` names the hardest items."""
    agreement = analysis.agreement
    n_classes = len(analysis.labels)
    votes = [np.bincount(column, minlength=n_classes).tolist() for column in analysis.hardest_codes.T]
    return {
        "teams": teams,
        "n_items": analysis.n_items,
        "gold_counts": analysis.gold_counts,
        "unsolved": analysis.unsolved,
        "majority_vote": {**stored_scores(analysis.majority_vote), "ties": analysis.vote_ties},
        "oracle": stored_scores(analysis.oracle),
        "agreement": {
            "teams": [teams[run] for run in agreement.runs],
            "kappa": agreement.kappa,
            "order": list(agreement.clustering.order),
            "merges": [
                {"left": list(merge.left), "right": list(merge.right), "kappa": merge.kappa}
                for merge in agreement.clustering.merges
            ],
        },
        "hardest": [
            {"id": name, "gold": int(analysis.gold[item]), "right": int(analysis.right[item]), "votes": count}
            for name, item, count in zip(hardest_ids, analysis.hardest.tolist(), votes, strict=True)
        ],
    }


def computed(phase: Phase, data: BoardData) -> tuple[dict[str, Any], str]:
    """The phase's analysis of the runs its board counts (``data``): the row's fields and a
    summary for the logs."""
    gold = kept_gold(phase)
    keep = None
    if data.part != ALL_ITEMS:
        keep = part_masks(len(gold.codes), percent=phase.private_percent, seed=phase.split_seed_number)[data.part]
    teams, labels, skipped = _team_labels(phase, data, gold, keep)
    fields: dict[str, Any] = {"board_values": None, "board_layout": "", "hardest_labels": None, "n_teams": len(teams)}
    fields |= {"part": data.part, "result": {"teams": teams, "skipped": skipped}}
    summary = f"{len(teams)} teams, {len(skipped)} left out"
    if len(teams) < 2:
        return fields, summary
    task_ = phase.task
    analysis = analyse(
        gold.codes if keep is None else gold.codes[keep],
        labels,
        labels=task_.labels,
        ordinal=task_.ordinal,
        agreement_runs=_agreement_teams(data, phase, teams),
    )
    positions = analysis.hardest if keep is None else np.flatnonzero(keep)[analysis.hardest]
    hardest_ids = [str(item) for item in gold.id_array.take(pa.array(positions)).to_pylist()]
    columns = columns_of(task_, calibrated=None)
    rows = [
        Scored.row_of(columns, PartScores(**stored_scores(report)), len(task_.labels))
        for report in (analysis.majority_vote, analysis.oracle)
    ]
    fields |= {
        "result": {**analysis_result(analysis, teams=teams, hardest_ids=hardest_ids), "skipped": skipped},
        "board_values": np.stack(rows).astype("<f8").tobytes(),
        "board_layout": Scored.layout_of(columns),
        "hardest_labels": pack_items(analysis.hardest_codes.ravel(), len(task_.labels)),
    }
    return fields, summary


def hardest_labels(row: PhaseAnalysis) -> np.ndarray | None:
    """Each analysed team's label of each hardest item (teams × items), if stored."""
    if row.hardest_labels is None or not row.result:
        return None
    return unpack_items(row.hardest_labels).reshape(len(row.result["teams"]), -1)
