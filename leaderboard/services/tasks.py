"""Creating a task and its phases, replacing a phase's gold file, re-scoring, and baseline rows."""

from __future__ import annotations

import datetime as dt
import secrets

import numpy as np
from django.db import transaction
from django.db.models import F

from leaderboard import errors
from leaderboard.derived import scores_changed
from leaderboard.models import (
    DEFAULT_MAX_PER_DAY,
    DEFAULT_MAX_TOTAL,
    MAX_PRIVATE_PERCENT,
    PHASE_POLICIES,
    Baseline,
    Phase,
    PhaseFile,
    StoredFile,
    Submission,
    Task,
)
from leaderboard.results_cache import results_changed
from leaderboard.services.scoring import enqueue_on_commit, stuck_after
from leaderboard.uploads import (
    Gold,
    check_size,
    clean_labels,
    clean_outputs,
    parse_gold,
    safe_file_name,
    stored_gold,
)
from scoring.engine.baselines import baseline_matrices, baseline_names
from scoring.engine.gold import GoldChange, compare_gold
from scoring.engine.outputs import OutputsFile, score_outputs
from scoring.engine.schemes import Output, Scheme
from scoring.engine.split import part_masks
from scoring.engine.suite import score_matrix


def _class_counts(codes: np.ndarray, n_classes: int) -> np.ndarray:
    return np.bincount(codes, minlength=n_classes).astype(np.float64)


def baselines_refresh(*, phase: Phase, gold: Gold) -> None:
    """(Re)compute the phase's baseline rows from its gold file (and, with a split test set,
    from each part's items, so that a board computed on a part compares with its own chance).
    A task of several outputs has one: each output's most frequent gold label for every item."""
    if isinstance(gold, OutputsFile):
        _majority_of_outputs(phase, gold)
        return
    n = len(gold.labels)
    counts = _class_counts(gold.codes, n)
    names = baseline_names(counts, gold.labels)
    parts = {}
    if phase.has_split:
        masks = part_masks(len(gold.codes), percent=phase.private_percent, seed=phase.split_seed_number)
        parts = {part: baseline_matrices(_class_counts(gold.codes[mask], n)) for part, mask in masks.items()}
    for kind, matrix in baseline_matrices(counts).items():
        baseline = Baseline.objects.filter(phase=phase, kind=kind).first() or Baseline(phase=phase, kind=kind)
        baseline.name = names[kind]
        ordinal = phase.task.ordinal
        part_reports = {
            part: score_matrix(matrices[kind], labels=gold.labels, ordinal=ordinal) for part, matrices in parts.items()
        }
        report = score_matrix(matrix, labels=gold.labels, n_items=len(gold.codes), ordinal=ordinal)
        baseline.apply(report, parts=part_reports or None)
        baseline.save()


MAJORITY_OF_OUTPUTS = "Most frequent gold label of each output"


def _majority_of_outputs(phase: Phase, gold: OutputsFile) -> None:
    """The majority baseline of a task of several outputs, scored on its items (and parts)."""
    codes = gold.codes
    predicted = np.tile([int(np.argmax(np.bincount(column))) for column in codes.T], (len(codes), 1))
    part_reports = None
    if phase.has_split:
        masks = part_masks(len(codes), percent=phase.private_percent, seed=phase.split_seed_number)
        part_reports = {
            part: score_outputs(codes[mask], predicted[mask], outputs=gold.outputs) for part, mask in masks.items()
        }
    Baseline.objects.filter(phase=phase).exclude(kind=Baseline.Kind.MAJORITY).delete()
    kind = Baseline.Kind.MAJORITY
    baseline = Baseline.objects.filter(phase=phase, kind=kind).first() or Baseline(phase=phase, kind=kind)
    baseline.name = MAJORITY_OF_OUTPUTS
    baseline.apply(score_outputs(codes, predicted, outputs=gold.outputs), parts=part_reports)
    baseline.save()


def _store_gold(*, scheme: Scheme, name: str, content: bytes) -> tuple[Gold, StoredFile]:
    """Validate a gold file and store its bytes; nothing is stored if it is refused."""
    gold = parse_gold(content=content, scheme=scheme)
    gold_file = StoredFile.of(name=safe_file_name(name), content=content)
    gold_file.save()
    return gold, gold_file


def _check_dates(*, task: Task, opens_at: dt.datetime, closes_at: dt.datetime, phase: Phase | None = None) -> None:
    """A phase closes after it opens, and overlaps no other phase of its task."""
    if closes_at <= opens_at:
        raise errors.BAD_DATES.error("closes_at")
    others = Phase.objects.filter(task=task, opens_at__lt=closes_at, closes_at__gt=opens_at)
    if phase is not None and phase.pk is not None:
        others = others.exclude(pk=phase.pk)
    other = others.order_by("opens_at").first()
    if other is not None:
        raise errors.PHASES_OVERLAP.error(
            "opens_at", other=other.name, opens_at=other.opens_at, closes_at=other.closes_at
        )


PHASE_DEFAULT_NAME = "Evaluation"
PHASE_DEFAULT_SLUG = "evaluation"


@transaction.atomic
def phase_create(
    *,
    task: Task,
    name: str,
    slug: str,
    opens_at: dt.datetime,
    closes_at: dt.datetime,
    gold_name: str = "",
    gold_content: bytes | None = None,
    description: str = "",
    max_per_day: int = DEFAULT_MAX_PER_DAY,
    max_total: int = DEFAULT_MAX_TOTAL,
    counting: str = Phase.Counting.LATEST,
    visibility: str = Phase.Visibility.PUBLIC,
    feedback: str | None = None,
    private_percent: int = 0,
    final_part: str = Phase.FinalPart.PRIVATE,
    contrastive_runs: int = 0,
    split_seed: str | None = None,
) -> Phase:
    """Add a phase to a task, with its own gold file (checked against the task's labels), dates,
    limits and policies, and its baselines. Without ``gold_content`` the phase waits for its
    gold file (:attr:`Phase.waits_for_gold`: no upload, no board) until :func:`gold_confirm`
    gives it one. ``feedback`` defaults to what the visibility suggests
    (:meth:`Phase.default_feedback`). With ``private_percent``, that share of the gold items is
    kept private, drawn with a new random seed that is recorded with the phase (``split_seed``
    keeps a seed already drawn: a task restored from its bundle). With ``contrastive_runs``,
    teams mark a primary run (it counts: ``counting`` must be 'chosen') and that many
    contrastive ones. A task divided into subtasks takes no phase: its subtasks do."""
    if task.subtasks.exists():
        raise errors.HAS_SUBTASKS.error(task=task.title)
    _check_dates(task=task, opens_at=opens_at, closes_at=closes_at)
    _check_split(private_percent)
    if Phase.objects.filter(task=task, slug=slug).exists():
        raise errors.PHASE_SLUG_TAKEN.error("slug", slug=slug)
    gold, gold_file = (None, None)
    if gold_content is not None:
        gold, gold_file = _store_gold(scheme=task.scheme, name=gold_name, content=gold_content)
    phase = Phase(
        task=task,
        name=name,
        slug=slug,
        description=description,
        gold_file=gold_file,
        gold_version=1 if gold_file else 0,
        opens_at=opens_at,
        closes_at=closes_at,
        max_per_day=max_per_day,
        max_total=max_total,
        counting=counting,
        visibility=visibility,
        feedback=feedback or Phase.default_feedback(visibility),
        private_percent=private_percent,
        split_seed=(split_seed or new_split_seed()) if private_percent else "0",
        final_part=final_part,
        contrastive_runs=contrastive_runs,
    )
    phase.full_clean()
    phase.save()
    if gold is not None:
        baselines_refresh(phase=phase, gold=gold)
    results_changed(task)
    return phase


def new_split_seed() -> str:
    """A seed for a phase's public/private split, unguessable until the phase shows it: 128
    random bits from the operating system, in decimal digits."""
    return str(secrets.randbits(128))


def _check_split(private_percent: int) -> None:
    if not 0 <= private_percent <= MAX_PRIVATE_PERCENT:
        raise errors.BAD_SPLIT.error("private_percent", limit=MAX_PRIVATE_PERCENT)


@transaction.atomic
def task_create(
    *,
    organiser,
    slug: str,
    title: str,
    description: str,
    primary_metric: str,
    opens_at: dt.datetime,
    closes_at: dt.datetime,
    labels: list[str] | None = None,
    outputs: tuple[Output, ...] = (),
    phase_name: str = PHASE_DEFAULT_NAME,
    phase_slug: str = PHASE_DEFAULT_SLUG,
    registration: str = Task.Registration.OPEN,
    terms: str = "",
    parent: Task | None = None,
    ordinal: bool = False,
    **phase_options,
) -> Task:
    """Create a task with its first phase (its gold file, if given yet, dates, limits and
    policies: ``phase_options`` go to :func:`phase_create`). More phases come with :func:`phase_create`.
    Terms, if any, are version 1. With ``parent`` (a task made by
    :func:`task_with_subtasks_create`), the task is a subtask of it: registration, terms,
    organisers and teams are the parent's. A task of one label column has ``labels``; a task with
    several labels an item has ``outputs`` instead (:func:`leaderboard.uploads.clean_outputs`)."""
    labels = [] if outputs else clean_labels(labels or [])
    outputs = clean_outputs(outputs) if outputs else ()
    if closes_at <= opens_at:
        raise errors.BAD_DATES.error("closes_at")
    if parent is not None:
        _check_parent(parent)
        registration, terms = Task.Registration.OPEN, ""
    task = _task_save(
        Task(
            parent=parent,
            slug=slug,
            title=title,
            description=description,
            labels=labels,
            outputs=[output.as_json() for output in outputs],
            ordinal=ordinal and not outputs,
            primary_metric=primary_metric,
            overall_columns=Scheme(outputs=outputs).default_overall_set,
            registration=registration,
            terms=terms.strip(),
        ),
        exclude=["labels"] if outputs else None,
    )
    if parent is None:
        task.community.organisers.add(organiser)
    else:
        results_changed(parent)
    phase_create(
        task=task,
        name=phase_name,
        slug=phase_slug,
        opens_at=opens_at,
        closes_at=closes_at,
        **phase_options,
    )
    return task


@transaction.atomic
def task_with_subtasks_create(
    *,
    organiser,
    slug: str,
    title: str,
    description: str,
    registration: str = Task.Registration.OPEN,
    terms: str = "",
) -> Task:
    """Create a task divided into subtasks (SemEval-2017 Task 4 and its subtasks A–E): one
    registration, one terms text, one set of teams and one stream of announcements, and no
    phase of its own; each subtask, added with :func:`task_create` (``parent``), has its labels,
    primary metric, phases and boards."""
    task = _task_save(
        Task(
            slug=slug, title=title, description=description, labels=[], registration=registration, terms=terms.strip()
        ),
        exclude=["labels"],
    )
    task.community.organisers.add(organiser)
    return task


def _task_save(task: Task, exclude: list[str] | None = None) -> Task:
    if Task.objects.filter(slug=task.slug).exists():
        raise errors.SLUG_TAKEN.error("slug", slug=task.slug)
    task.full_clean(exclude=exclude)
    task.save()
    return task


def _check_parent(parent: Task) -> None:
    """A subtask's parent is a task divided into subtasks: not a subtask, and without phases."""
    if parent.is_subtask:
        raise errors.SUBTASK_OF_SUBTASK.error(task=parent.title, parent=parent.root.title)
    if parent.phases.exists():
        raise errors.HAS_PHASES.error(task=parent.title)


TASK_SETTINGS_FIELDS = (
    "title",
    "description",
    "primary_metric",
    "overall_method",
    "overall_columns",
    "registration",
    "terms",
)
"""What an organiser may change of a task at any time (the labels are fixed). A change of the
terms raises their version (:meth:`Task.save`): every participant accepts them again before
taking part."""

PHASE_SETTINGS_FIELDS = ("name", "description", "opens_at", "closes_at", *PHASE_POLICIES)
"""What an organiser may change of a phase (the gold file has its own way); the split of its
test set only until the phase opens."""

SPLIT_FIELDS = ("private_percent", "final_part")


def _check_settings(settings: dict, allowed: tuple[str, ...], what: str) -> None:
    unknown = set(settings) - set(allowed)
    if unknown:
        raise ValueError(f"not a {what} setting: {', '.join(sorted(unknown))}")


@transaction.atomic
def task_update(*, task: Task, settings: dict) -> Task:
    """Change a task's settings (any of :data:`TASK_SETTINGS_FIELDS`)."""
    _check_settings(settings, TASK_SETTINGS_FIELDS, "task")
    for name, value in settings.items():
        setattr(task, name, value.strip() if name == "terms" else value)
    task.full_clean(exclude=["slug", "labels"])
    task.save(update_fields=list(settings))
    results_changed(task)
    return task


@transaction.atomic
def phase_update(*, phase: Phase, settings: dict) -> Phase:
    """Change a phase's settings (any of :data:`PHASE_SETTINGS_FIELDS`); its dates may not come
    to overlap another phase's. Contrastive runs marked beyond a lowered ``contrastive_runs``
    lose their mark."""
    _check_settings(settings, PHASE_SETTINGS_FIELDS, "phase")
    changed_split = [name for name in SPLIT_FIELDS if name in settings and settings[name] != getattr(phase, name)]
    if changed_split and phase.has_opened():
        raise errors.SPLIT_FIXED.error(changed_split[0])
    _check_split(settings.get("private_percent", phase.private_percent))
    for name, value in settings.items():
        setattr(phase, name, value)
    _check_dates(task=phase.task, opens_at=phase.opens_at, closes_at=phase.closes_at, phase=phase)
    fields = list(settings)
    if "private_percent" in changed_split:
        phase.split_seed = new_split_seed() if phase.private_percent else "0"
        fields.append("split_seed")
    phase.full_clean(exclude=["task", "gold_file", "pending_gold_file", "slug"])
    phase.save(update_fields=fields)
    # Fewer contrastive runs: the marks beyond them go, and those runs may count again.
    phase.submissions.filter(contrastive__gt=phase.contrastive_runs).update(contrastive=None)
    if "private_percent" in changed_split and not phase.waits_for_gold:
        baselines_refresh(phase=phase, gold=stored_gold(phase))
    # The dates, the counting rule or the split change what the board counts and shows.
    scores_changed(phase=phase)
    return phase


def gold_preview(*, phase: Phase, gold_name: str, gold_content: bytes) -> GoldChange:
    """Validate a new gold file for a phase, keep it waiting for confirmation, and say what it
    would change (for a phase that waits for its first, every id is new).

    Nothing else changes until :func:`gold_confirm`: the current gold file and every score stay.
    """
    gold, gold_file = _store_gold(scheme=phase.task.scheme, name=gold_name, content=gold_content)
    with transaction.atomic():
        Phase.objects.filter(pk=phase.pk).update(pending_gold_file=gold_file)
    phase.pending_gold_file = gold_file
    return compare_gold(None if phase.waits_for_gold else stored_gold(phase), gold)


@transaction.atomic
def gold_confirm(*, phase: Phase) -> int:
    """Make the previewed gold file the phase's, and re-score its submissions; returns how many.
    A phase that waited for its gold file opens with it (version 1): uploads, board and samples.

    Old scores stay on the board, marked as being re-scored, until the new ones are written; a
    submission that no longer matches the gold file fails with a message that says it is the
    organisers' change, and counts against no limit.
    """
    # FOR NO KEY UPDATE: another confirmation waits, rows that refer to the phase (a scoring job's
    # requests for its intervals and analysis) do not.
    locked = (
        Phase.objects.select_for_update(of=("self",), no_key=True).select_related("pending_gold_file").get(pk=phase.pk)
    )
    if locked.pending_gold_file is None:
        raise errors.GOLD_NOT_PENDING.error("gold")
    gold = parse_gold(content=bytes(locked.pending_gold_file.content), scheme=phase.task.scheme)
    Phase.objects.filter(pk=phase.pk).update(
        gold_file=locked.pending_gold_file, pending_gold_file=None, gold_version=F("gold_version") + 1
    )
    phase.refresh_from_db()
    baselines_refresh(phase=phase, gold=gold)
    ids = list(phase.submissions.values_list("pk", flat=True))
    phase.submissions.filter(status=Submission.Status.FAILED).update(status=Submission.Status.QUEUED)
    if ids:  # the board shows them being re-scored; their new scores ask for its derived results
        results_changed(phase.task_id)
        enqueue_on_commit(ids)
    else:
        scores_changed(phase=phase)
    return len(ids)


def gold_replace(*, phase: Phase, gold_name: str, gold_content: bytes) -> int:
    """Preview and confirm in one step (for scripts): see :func:`gold_confirm`."""
    gold_preview(phase=phase, gold_name=gold_name, gold_content=gold_content)
    return gold_confirm(phase=phase)


@transaction.atomic
def task_rescore(*, task: Task) -> int:
    """Queue for scoring what is queued, stuck in scoring (lost jobs) or scored against an older
    gold file of its phase, in every phase; scoring is idempotent per gold version. Returns how
    many."""
    ids = list(task.submissions.needing_scoring(stuck_after=stuck_after()).values_list("pk", flat=True))
    enqueue_on_commit(ids)
    return len(ids)


DATA_FILE_FIELD = "file"


@transaction.atomic
def phase_file_add(*, phase: Phase, title: str, name: str, content: bytes) -> PhaseFile:
    """Attach a file for participants to a phase (inputs without labels, trial data, a README or
    a licence), stored exactly as uploaded."""
    check_size(content, field=DATA_FILE_FIELD)
    if not content:
        raise errors.FILE_EMPTY.error(DATA_FILE_FIELD)
    title = " ".join(title.split()) or safe_file_name(name)
    stored = StoredFile.of(name=safe_file_name(name), content=content)
    stored.save()
    return PhaseFile.objects.create(phase=phase, file=stored, title=title[:120])


@transaction.atomic
def phase_file_remove(*, data_file: PhaseFile) -> None:
    """Take a data file off its phase (its bytes go too: :func:`leaderboard.models.delete_unowned_files`)."""
    data_file.delete()
