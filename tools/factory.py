"""The data of the benchmarks and the scaled tests, built one way.

Files and labels (plain numpy): item ids, ``id,label`` files, noisy predictions, random
confusion matrices. Rows: a task through the services with many teams, and scored
submissions written in bulk the one way the scoring task would have left them —
``Submission(...)``, then :meth:`~leaderboard.models.Scored.apply` of
:func:`~scoring.engine.suite.score_matrix`, then ``bulk_create`` — so that a board of 500
teams takes seconds, not minutes.

It imports the models: import it once Django is set up (``django.setup()``, or under pytest).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Phase, StoredFile, Submission, Task, Team
from leaderboard.services import tasks as task_service
from leaderboard.services import teams as team_service
from leaderboard.uploads import stored_gold
from scoring.engine.items import codes_with_matrix
from scoring.engine.outputs import score_outputs
from scoring.engine.split import part_masks, part_matrices
from scoring.engine.suite import score_matrix

TEAM_NAME = "Team {n:03d}"
"""Team ``n``'s name; ``str.format`` with ``n``."""
MEMBER_NAME = "team-{n:03d}"
"""The username of team ``n``'s only member."""

# --- files and labels --------------------------------------------------------------------------


def item_ids(count: int) -> list[str]:
    return [f"item-{i:07d}" for i in range(count)]


def labels_csv(ids: Sequence[str], labels: Sequence[str], codes: np.ndarray) -> bytes:
    """A gold or hard-prediction file: header ``id,label``, one line per item."""
    names = [labels[code] for code in codes.tolist()]
    return ("id,label\n" + "".join(f"{item},{name}\n" for item, name in zip(ids, names, strict=True))).encode()


def outputs_csv(ids: Sequence[str], outputs: Sequence[str], codes: np.ndarray) -> bytes:
    """A file of a task with several outputs: header ``id`` and the outputs, one line per item
    (``codes`` items × outputs, each output's labels its codes written as numbers)."""
    lines = [
        ",".join(("id", *outputs)),
        *(f"{item}," + ",".join(map(str, row)) for item, row in zip(ids, codes.tolist(), strict=True)),
    ]
    return ("\n".join(lines) + "\n").encode()


def noisy_codes(gold: np.ndarray, *, n_labels: int, error_rate: float, rng: np.random.Generator) -> np.ndarray:
    """Predictions that copy the gold codes except for a share of items given a random label."""
    predicted = gold.copy()
    wrong = rng.random(len(gold)) < error_rate
    predicted[wrong] = rng.integers(0, n_labels, size=int(wrong.sum()))
    return predicted


def random_confusion_matrix(rng: np.random.Generator, *, gold_counts: Sequence[int]) -> np.ndarray:
    """A confusion matrix (rows predicted, columns gold) of a better-than-chance system: each
    gold class keeps a random share of 30–95 % of its items, the rest spread evenly."""
    n_classes = len(gold_counts)
    accuracy = rng.uniform(0.3, 0.95)
    columns = []
    for gold, count in enumerate(gold_counts):
        share = np.full(n_classes, (1 - accuracy) / (n_classes - 1))
        share[gold] = accuracy
        columns.append(rng.multinomial(count, share))
    return np.array(columns).T


# --- rows --------------------------------------------------------------------------------------


def task_create(
    *,
    slug: str,
    title: str,
    description: str,
    labels: Sequence[str],
    gold_content: bytes,
    organiser_password: str,
    opens_at: datetime,
    closes_at: datetime,
    organiser_name: str = "organiser",
    primary_metric: str = "macro_recall",
    **options: Any,
) -> Task:
    """A task through the services, organised by a new user ``organiser_name``, ranked by macro
    recall (the primary metric of SemEval-2017 Task 4A) unless told; ``options`` go to
    ``task_service.task_create``."""
    return task_service.task_create(
        organiser=get_user_model().objects.create_user(organiser_name, password=organiser_password),
        slug=slug,
        title=title,
        description=description,
        labels=list(labels),
        gold_name="gold.csv",
        gold_content=gold_content,
        primary_metric=primary_metric,
        opens_at=opens_at,
        closes_at=closes_at,
        **options,
    )


@transaction.atomic
def teams_create(*, task: Task, count: int, name: str = TEAM_NAME) -> list[Team]:
    """``count`` teams without members, in one transaction: a board to read, nobody to log in.

    Saved one by one, not in bulk: ``Team.save`` fills fields derived from the name."""
    return [Team.objects.create(task=task.community.task, name=name.format(n=n)) for n in range(count)]


class Member(NamedTuple):
    team: Team
    user: AbstractBaseUser


def member_teams_create(*, task: Task, count: int, password: str) -> list[Member]:
    """``count`` teams of one member each (users ``team-000`` …, who can log in with
    ``password``): the users in one query, each team through ``team_service.team_create``."""
    user_model = get_user_model()
    password_hash = make_password(password)  # hashed once: 500 hashes would cost minutes
    users = user_model.objects.bulk_create(
        [user_model(username=MEMBER_NAME.format(n=n), password=password_hash) for n in range(count)]
    )
    return [
        Member(team_service.team_create(task=task, user=user, name=TEAM_NAME.format(n=n)), user)
        for n, user in enumerate(users)
    ]


@dataclass(frozen=True)
class ScoredRun:
    """One hard-label upload to store as scored: whose, which file, its confusion matrix
    (rows predicted, columns gold, in the task's label order), and when."""

    team: Team
    file: StoredFile
    matrix: np.ndarray | None
    """Its confusion matrix (a task with several outputs: ``None``, its ``items`` say)."""
    at: datetime
    submitted_by: AbstractBaseUser | None = None
    items: np.ndarray | None = None
    """A task with several outputs: its predictions, items × outputs codes in the gold order."""


def scored_submissions_create(
    *, task: Task, runs: Iterable[ScoredRun], batch_size: int, phase: Phase | None = None, seed: int = 0
) -> list[Submission]:
    """Store ``runs`` as submissions to ``phase`` (default: the task's current phase) scored
    against its current gold, uploaded and scored at their ``at``, each scored once; ``file``
    rows must be saved already.

    Each gets per-item predictions that give its matrix against the phase's gold codes (each
    gold class's predictions in a random order, from ``seed``), as an upload scored by the
    scoring task would have, so that bootstrap intervals can be computed, and, on a phase with
    a split test set, the scores of each part; a matrix whose columns do not sum to the gold
    counts gets none of these (its row then shows no interval)."""
    phase = phase or task.current_phase()
    gold = stored_gold(phase).codes
    outputs = task.scheme.outputs
    rng = np.random.default_rng(seed)
    submissions = []
    for run in runs:
        submission = Submission(
            phase=phase,
            team=run.team,
            submitted_by=run.submitted_by,
            file=run.file,
            kind=Submission.Kind.HARD,
            status=Submission.Status.SCORED,
            created_at=run.at,
            scored_at=run.at,
            scored_gold_version=phase.gold_version,
            score_count=1,
        )
        masks = None
        if phase.private_percent:
            masks = part_masks(len(gold), percent=phase.private_percent, seed=phase.split_seed_number)
        if outputs:
            items = run.items
            report = score_outputs(gold, items, outputs=outputs)
            parts = masks and {part: score_outputs(gold[m], items[m], outputs=outputs) for part, m in masks.items()}
        else:
            try:
                items = codes_with_matrix(run.matrix, gold, rng)
            except ValueError:
                items = None
            report = score_matrix(run.matrix, labels=task.labels, ordinal=task.ordinal)
            parts = None
            if masks and items is not None:
                matrices = part_matrices(
                    gold, items, len(task.labels), percent=phase.private_percent, seed=phase.split_seed_number
                )
                parts = {
                    part: score_matrix(matrix, labels=task.labels, ordinal=task.ordinal)
                    for part, matrix in matrices.items()
                }
        submission.apply(report, items=items, parts=parts)
        submissions.append(submission)
    return Submission.objects.bulk_create(submissions, batch_size=batch_size)


SEMEVAL_LABELS = ("negative", "neutral", "positive")
SEMEVAL_GOLD_COUNTS = (3972, 5937, 2375)
"""The labels and class counts of the SemEval-2017 Task 4A test set (12,284 items)."""


def scored_phase(
    *,
    slug: str,
    title: str,
    description: str,
    password: str,
    teams: int,
    seed: int = 2017,
    organiser: str = "organiser",
) -> Phase:
    """A task whose gold file has the SemEval-2017 Task 4A test set's size and class counts
    (ids in a seeded order), open now, and ``teams`` teams without members, each with one scored
    hard-label submission (:func:`scored_submissions_create`: a random better-than-chance
    matrix, per-item predictions rebuilt from it); its phase."""
    rng = np.random.default_rng(seed)
    gold = rng.permutation(np.repeat(np.arange(len(SEMEVAL_LABELS)), SEMEVAL_GOLD_COUNTS))
    now = timezone.now()
    task = task_create(
        slug=slug,
        title=title,
        description=description,
        labels=SEMEVAL_LABELS,
        gold_content=labels_csv(item_ids(len(gold)), SEMEVAL_LABELS, gold),
        organiser_password=password,
        organiser_name=organiser,
        opens_at=now - timedelta(days=2),
        closes_at=now + timedelta(days=1),
    )
    shared_file = StoredFile.of(name="run.csv", content=b"id,label\n")
    shared_file.save()
    runs = [
        ScoredRun(
            team=team,
            file=shared_file,
            matrix=random_confusion_matrix(rng, gold_counts=SEMEVAL_GOLD_COUNTS),
            at=now - timedelta(hours=1),
        )
        for team in teams_create(task=task, count=teams)
    ]
    scored_submissions_create(task=task, runs=runs, batch_size=500)
    return task.current_phase()
