"""What the teams of a phase got wrong together: its analysis, computed in the background.

The engine does the work (:func:`scoring.engine.analysis.analyse`, and of a task with several
outputs :func:`scoring.engine.outputs_analysis.analyse_outputs`: the majority vote of the teams
and the oracle, each scored under every metric; the items no team got right; kappa between the
teams and its clustering; the hardest items); here is when it runs, on what, and where the
result is kept. Who may read the hardest items, which hold gold labels, is
:func:`leaderboard.permissions.can_view_hardest_items`.

**On what.** Each team's counting submission, as the board counts it, through the per-item
predictions stored with its scores (:attr:`Submission.items`; a probability file as its arg-max
labels, a tie to the first label; of a task with several outputs, its label of every output),
on the part of a split test set the board shows. A team is left out, with the reason shown
beside it, when its run is being re-scored against a new gold file, when its file no longer
reads against the gold, or when its items do not give its stored confusion matrix (of several
outputs, each output's). Kappa and the clustering are of the :data:`AGREEMENT_TEAMS` teams first
under the primary metric (a heatmap of thousands of teams shows nothing; kappa grows with the
square of their number); everything else is of every team.

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
from leaderboard.uploads import Gold, kept_gold
from scoring.engine.analysis import Analysis, analyse, hard_labels
from scoring.engine.confusion import hard_confusions
from scoring.engine.io import InputFileError, read_predictions
from scoring.engine.items import pack_items, reproduces, unpack_items
from scoring.engine.outputs import OutputsFile, read_output_predictions
from scoring.engine.outputs_analysis import analyse_outputs
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


def _items_of(submission: Submission, *, gold: Gold) -> np.ndarray | None:
    """A counting run's per-item predictions; items missing (scored before they were kept) are
    read from its stored file; ``None`` when it no longer reads against the gold."""
    items = submission.item_predictions()
    if items is not None:
        return items
    try:
        content = bytes(submission.file.content)
        if isinstance(gold, OutputsFile):
            return read_output_predictions(content, gold=gold, name=submission.file.name)
        return aligned_items(read_predictions(content, gold=gold, name=submission.file.name))
    except InputFileError:
        return None


def _same_matrices(codes: list[np.ndarray], gold: np.ndarray, n_classes: int, stored: list) -> list[bool]:
    """Whether each run's codes (of one label column) give its ``stored`` matrix exactly,
    counted all at once (:func:`~scoring.engine.confusion.hard_confusions`)."""
    matrices = hard_confusions(np.stack(codes), gold, n_classes) if codes else []
    return [
        matrix is not None and np.array_equal(found.astype(np.float64), np.asarray(matrix, dtype=np.float64))
        for found, matrix in zip(matrices, stored, strict=True)
    ]


def _checked_labels(runs: list[tuple[int, Submission, np.ndarray]], gold: Gold) -> dict[int, np.ndarray | str]:
    """Each run's label per item (a probability file's arg-max; of several outputs, per item and
    output), or why it has none: its items must give its stored confusion matrix exactly (of
    several outputs, each output's). Class codes are counted all at once, probability rows one
    run at a time."""
    if isinstance(gold, OutputsFile):
        hard = [(team, run, items) for team, run, items in runs if items.shape == gold.codes.shape]
        same = [True] * len(hard)
        for index, output in enumerate(gold.outputs):
            stored = [((run.output_scores or {}).get(output.name) or {}).get("confusion_matrix") for _, run, _ in hard]
            codes = [items[:, index] for *_, items in hard]
            matched = _same_matrices(codes, gold.codes[:, index], len(output.labels), stored)
            same = [before and now for before, now in zip(same, matched, strict=True)]
        found: dict[int, np.ndarray | str] = dict.fromkeys((team for team, *_ in runs), SKIPPED_MISMATCH)
        return found | {team: items for (team, _, items), ok in zip(hard, same, strict=True) if ok}
    hard = [(team, run, items) for team, run, items in runs if items.ndim == 1]
    same = _same_matrices(
        [items for *_, items in hard], gold.codes, len(gold.labels), [run.confusion_matrix for _, run, _ in hard]
    )
    found = {team: items if ok else SKIPPED_MISMATCH for (team, _, items), ok in zip(hard, same, strict=True)}
    for team, run, items in runs:
        if items.ndim == 2:
            ok = reproduces(gold.codes, items, run.confusion_matrix)
            found[team] = hard_labels(items) if ok else SKIPPED_MISMATCH
    return found


def _team_labels(
    phase: Phase, data: BoardData, gold: Gold, keep: np.ndarray | None
) -> tuple[list[int], np.ndarray, dict[str, str]]:
    """The analysed teams (ids, in the board's order), their labels (teams × items kept, ×
    outputs) and the teams left out with why. The runs are read :data:`CHUNK` at a time."""
    counting = [(int(team), int(pk)) for team, pk in zip(data.team_ids, data.submission_ids, strict=True) if pk]
    n_items = len(gold.codes) if keep is None else int(keep.sum())
    shape = (len(counting), n_items, *gold.codes.shape[1:])
    labels = np.empty(shape, dtype=np.min_scalar_type(max(_n_classes(gold) - 1, 0)))
    scores = "output_scores" if isinstance(gold, OutputsFile) else "confusion_matrix"
    fields = ("id", "team_id", "phase_id", "items", scores, "file_id", "scored_gold_version")
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


def _n_classes(gold: Gold) -> int:
    """The most labels of a label column: the codes' range."""
    if isinstance(gold, OutputsFile):
        return max(len(output.labels) for output in gold.outputs)
    return len(gold.labels)


def _agreement_teams(data: BoardData, phase: Phase, teams: list[int]) -> list[int]:
    """The positions among ``teams`` of the first :data:`AGREEMENT_TEAMS` under the primary metric."""
    position = {team: p for p, team in enumerate(teams)}
    ordered = [int(data.team_ids[row]) for row in data.order(primary_column(phase.task))]
    return [position[team] for team in ordered if team in position][:AGREEMENT_TEAMS]


def analysis_result(analysis: Analysis, *, teams: list[int], hardest_ids: list[str]) -> dict[str, Any]:
    """The stored result (ids of teams, positions of items; see :class:`PhaseAnalysis`);
    ``hardest_ids`` names the hardest items."""
    agreement = analysis.agreement
    vote_ties, oracle = {"ties": analysis.vote_ties}, {}
    if analysis.outputs:
        vote_ties["ties_per_output"] = list(analysis.output_ties)
        oracle["exact_match_one_run"] = analysis.exact_match_one_run
    return {
        "teams": teams,
        "n_items": analysis.n_items,
        "gold_counts": analysis.gold_counts,
        "unsolved": analysis.unsolved,
        "majority_vote": {**stored_scores(analysis.majority_vote), **vote_ties},
        "oracle": {**stored_scores(analysis.oracle), **oracle},
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
            {"id": name, "gold": analysis.gold[item].tolist(), "right": int(analysis.right[item]), "votes": count}
            for name, item, count in zip(hardest_ids, analysis.hardest.tolist(), analysis.hardest_votes(), strict=True)
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
    gold_codes = gold.codes if keep is None else gold.codes[keep]
    agreement_runs = _agreement_teams(data, phase, teams)
    if isinstance(gold, OutputsFile):
        analysis = analyse_outputs(gold_codes, labels, outputs=gold.outputs, agreement_runs=agreement_runs)
    else:
        analysis = analyse(
            gold_codes, labels, labels=task_.labels, ordinal=task_.ordinal, agreement_runs=agreement_runs
        )
    positions = analysis.hardest if keep is None else np.flatnonzero(keep)[analysis.hardest]
    hardest_ids = [str(item) for item in gold.id_array.take(pa.array(positions)).to_pylist()]
    columns = columns_of(task_, calibrated=None)
    rows = [
        Scored.row_of(columns, PartScores(**stored_scores(report)), task_.scheme.matrix_size)
        for report in (analysis.majority_vote, analysis.oracle)
    ]
    hardest_codes = analysis.hardest_codes  # runs × hardest items (× outputs), stored as rows of codes
    hardest_codes = hardest_codes.reshape(-1, *hardest_codes.shape[2:])
    fields |= {
        "result": {**analysis_result(analysis, teams=teams, hardest_ids=hardest_ids), "skipped": skipped},
        "board_values": np.stack(rows).astype("<f8").tobytes(),
        "board_layout": Scored.layout_of(columns),
        "hardest_labels": pack_items(hardest_codes, _n_classes(gold)),
    }
    return fields, summary


def hardest_labels(row: PhaseAnalysis) -> np.ndarray | None:
    """Each analysed team's label of each hardest item (teams × items, × outputs), if stored."""
    if row.hardest_labels is None or not row.result:
        return None
    codes = unpack_items(row.hardest_labels)
    return codes.reshape(len(row.result["teams"]), -1, *codes.shape[1:])
