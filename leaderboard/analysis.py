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

**When.** Never because someone reads a page: the write that changes a phase's counting scores
asks for it in its transaction (:func:`analysis_request`, called by
:func:`leaderboard.stability.scores_changed`), at most one job per phase at a time. A job that
finds the scores changed while it ran asks again, so the last one runs on the final scores.
With RQ a worker runs the job, at most every ``settings.ANALYSIS_EVERY_S`` per phase (during a
rush the scores change every second), and every worker's recovery sweep (:func:`analysis_due`)
asks for the analyses that are not of their phase's current scores once that pause is over (and
when the part a board shows changes at the close). With the immediate backend (the embedded
default) the job runs as the write commits, like the scoring job itself: 3,000 teams take about
a second (benchmarks/README.md).

**Where.** One :class:`~leaderboard.models.PhaseAnalysis` row per phase, stamped with the digest
of what it was computed from (:func:`leaderboard.selectors.boards.analysis_stamp`): the result,
the majority vote's and the oracle's values packed for the board, and each team's label of each
hardest item for the organisers' CSV. Storing a result raises the task's scores version, so
pages show it at once; a board built from other scores shows the stored rows marked as stale.

**Locks.** A write that asks for an analysis locks the phase's row after the task's (its
scores change raised the task's versions first), and the job that stores one takes them in the
same order: the job's check for newer scores then waits for any write that asked meanwhile, so
a change is never left without an analysis.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import numpy as np
import pyarrow as pa
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from leaderboard.models import (
    ALL_ITEMS,
    PartScores,
    Phase,
    PhaseAnalysis,
    Scored,
    Submission,
    Task,
    stored_scores,
)
from leaderboard.results_cache import results_changed
from leaderboard.selectors.boards import BoardData, analysis_stamp, board_data, columns_of, primary_column
from leaderboard.uploads import kept_gold
from scoring.engine.analysis import Analysis, analyse, hard_labels
from scoring.engine.confusion import hard_confusions
from scoring.engine.io import InputFileError, LabelFile, read_predictions
from scoring.engine.items import pack_items, reproduces, unpack_items
from scoring.engine.scorer import aligned_items
from scoring.engine.split import part_masks

logger = logging.getLogger(__name__)

AGREEMENT_TEAMS = 50
"""The teams whose kappa the analysis computes and clusters: the first under the primary metric
(as the rank chart of the disagreement page draws the first 50)."""
LOST_AFTER = dt.timedelta(minutes=10)
"""A computation asked for this long ago and not finished is taken for lost and asked again."""
CHUNK = 200
"""Runs read from the database at a time: their items are turned into labels as they come, so
that the job holds one byte per team and item, whatever the files were."""

SKIPPED_RESCORING = "being re-scored against the new gold file"
SKIPPED_UNREADABLE = "its file no longer reads against the gold file"
SKIPPED_MISMATCH = "its per-item predictions do not give its stored confusion matrix"


# --- asking --------------------------------------------------------------------------------------


def _pausing(row: PhaseAnalysis | None, now: dt.datetime) -> bool:
    """Whether the phase's last analysis, on a worker, is less than ``settings.ANALYSIS_EVERY_S``
    old: the workers' sweep asks for the next once that pause is over. (With the immediate
    backend there is no sweep, and the analysis is computed as the write commits.)"""
    if settings.TASKS_BACKEND != "rq" or row is None or row.computed_at is None:
        return False
    return row.computed_at > now - dt.timedelta(seconds=settings.ANALYSIS_EVERY_S)


def _under_way(row: PhaseAnalysis | None, now: dt.datetime) -> bool:
    return row is not None and row.requested_at is not None and row.requested_at > now - LOST_AFTER


def analysis_request(*, phase: Phase) -> None:
    """Ask for the phase's analysis unless a computation is under way (asked for less than
    :data:`LOST_AFTER` ago) or pausing (:func:`_pausing`). Call it inside the writing
    transaction; the job is handed over on commit. A phase waiting for its gold file has none
    to ask for."""
    if phase.waits_for_gold:
        return
    fields = ("pk", "requested_at", "computed_at")
    row, _ = PhaseAnalysis.objects.select_for_update().only(*fields).get_or_create(phase=phase)
    now = timezone.now()
    if _under_way(row, now) or _pausing(row, now):
        return
    PhaseAnalysis.objects.filter(pk=row.pk).update(requested_at=now)
    transaction.on_commit(lambda: enqueue_analysis(phase.pk))


def enqueue_analysis(phase_id: int) -> None:
    """Hand the computation to the queue (with the immediate backend: compute it now). Call it
    on commit."""
    try:
        compute_analysis.enqueue(phase_id)
    except Exception:  # the queue is an optimisation: the recovery sweep asks again
        logger.exception("could not compute or enqueue the analysis of phase %s", phase_id)
        PhaseAnalysis.objects.filter(phase_id=phase_id).update(requested_at=None)


@task()
def compute_analysis(phase_id: int) -> str:
    """Compute phase ``phase_id``'s analysis of its current scores."""
    try:
        return analysis_compute(phase_id=phase_id)
    except Exception:
        PhaseAnalysis.objects.filter(phase_id=phase_id).update(requested_at=None)
        raise


def analysis_due(*, now: dt.datetime | None = None) -> int:
    """Ask for the analysis of every phase whose stored one is not of its current scores and
    that no job is computing and whose pause is over (the workers' recovery sweep runs this);
    how many were asked for. Phases closed more than a day ago are left alone: their scores no
    longer change."""
    now = now or timezone.now()
    asked = 0
    phases = Phase.objects.select_related("task").filter(
        closes_at__gt=now - dt.timedelta(days=1), submissions__status=Submission.Status.SCORED
    )
    for phase in phases.distinct():
        row = PhaseAnalysis.objects.filter(phase=phase).only("stamp", "requested_at", "computed_at").first()
        if _under_way(row, now) or _pausing(row, now):
            continue
        if row is not None and row.stamp == analysis_stamp(board_data(phase), phase):
            continue
        with transaction.atomic():
            analysis_request(phase=phase)
        asked += 1
    return asked


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


def _computed(phase: Phase, data: BoardData) -> tuple[dict[str, Any], dict[str, Any]]:
    """The phase's analysis of the runs ``data`` counts: the row's ``result`` and its other fields."""
    gold = kept_gold(phase)
    keep = None
    if data.part != ALL_ITEMS:
        keep = part_masks(len(gold.codes), percent=phase.private_percent, seed=phase.split_seed_number)[data.part]
    teams, labels, skipped = _team_labels(phase, data, gold, keep)
    fields: dict[str, Any] = {"board_values": None, "board_layout": "", "hardest_labels": None, "n_teams": len(teams)}
    if len(teams) < 2:
        return {"teams": teams, "skipped": skipped}, fields
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
        "board_values": np.stack(rows).astype("<f8").tobytes(),
        "board_layout": Scored.layout_of(columns),
        "hardest_labels": pack_items(analysis.hardest_codes.ravel(), len(task_.labels)),
    }
    return {**analysis_result(analysis, teams=teams, hardest_ids=hardest_ids), "skipped": skipped}, fields


def analysis_compute(*, phase_id: int) -> str:
    """Compute and store the phase's analysis of its current scores (idempotent: nothing to do
    when the stored one is current); returns what happened, for the logs. If the scores changed
    while it ran, it asks again."""
    phase = Phase.objects.select_related("task").filter(pk=phase_id).first()
    if phase is None:
        return "gone"
    versions = (phase.task.scores_version, phase.task.results_version)
    # The stamp first, the runs after: a result can only be newer than its stamp.
    data = board_data(phase)
    stamp = analysis_stamp(data, phase)
    if PhaseAnalysis.objects.filter(phase=phase, stamp=stamp).exists():
        PhaseAnalysis.objects.filter(phase=phase).update(requested_at=None)
        return "current already"
    result, fields = _computed(phase, data)
    with transaction.atomic():
        # The task's row first, as a write that asks: any change of the scores raised a version.
        now = Task.objects.select_for_update().values_list("scores_version", "results_version").get(pk=phase.task_id)
        results_changed(phase.task_id, scores_only=True)
        row, _ = PhaseAnalysis.objects.select_for_update().get_or_create(phase=phase)
        row.stamp, row.part, row.result = stamp, data.part, result
        for name, value in fields.items():
            setattr(row, name, value)
        row.computed_at, row.requested_at = timezone.now(), None
        row.save()
        if now != versions and analysis_stamp(board_data(phase), phase) != stamp:
            analysis_request(phase=phase)  # newer scores: at once, or once the pause is over
    return f"{fields['n_teams']} teams, {len(result['skipped'])} left out"


def hardest_labels(row: PhaseAnalysis) -> np.ndarray | None:
    """Each analysed team's label of each hardest item (teams × items), if stored."""
    if row.hardest_labels is None or not row.result:
        return None
    return unpack_items(row.hardest_labels).reshape(len(row.result["teams"]), -1)
