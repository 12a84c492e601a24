"""Importing a bundle as a new task: the upload waits as a pending import while its
organiser reads the preview (what will be created, what cannot come over, which phases wait
for their gold file and why) and answers its questions, then the task is created from the plan
in one transaction, or nothing is.

The bundle is read again at confirmation (nothing of a preview is trusted): every check of
:mod:`leaderboard.bundles` runs again, and every run is validated against its phase's gold
file as an upload is. A run that no longer matches it (its original failed for the same reason)
is stored as failed with the reason. Runs are scored by the scoring task once the transaction
commits, as uploads are; teams come without members (their accounts are on the other site). A
task divided into subtasks comes back divided: the task with its registration, terms and
teams, each subtask with its labels, phases and runs.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from leaderboard import errors
from leaderboard.bundles.files import read_named
from leaderboard.bundles.plan import FilePlan, ImportOptions, PhasePlan, TaskPlan, TeamPlan, subtask_slug
from leaderboard.bundles.reading import open_bundle, plan_of
from leaderboard.bundles.zips import FORM_FIELD, SafeZip
from leaderboard.models import (
    PHASE_POLICIES,
    OrganiserAction,
    Phase,
    StoredFile,
    Submission,
    Task,
    TaskImport,
    TaskImportGold,
    Team,
)
from leaderboard.results_cache import results_changed
from leaderboard.services.scoring import enqueue_on_commit
from leaderboard.services.tasks import (
    phase_create,
    phase_file_add,
    phase_update,
    task_create,
    task_update,
    task_with_subtasks_create,
)
from leaderboard.uploads import kept_gold, prediction_kind, safe_file_name


def import_upload(*, user, name: str, content: bytes) -> TaskImport:
    """Check a bundle (its zip, its YAML, its files) and keep it waiting for its organiser's
    confirmation; a person has one pending import at a time. A bad bundle is refused here,
    with the file, the field and what was expected."""
    bundle = open_bundle(content, name=safe_file_name(name))
    plan_of(bundle, ImportOptions())
    with transaction.atomic():
        TaskImport.objects.filter(user=user).delete()
        stored = StoredFile.of(name=safe_file_name(name), content=content)
        stored.save()
        return TaskImport.objects.create(user=user, file=stored)


@transaction.atomic
def import_choose(*, pending: TaskImport, options: ImportOptions, golds: dict[int, FilePlan]) -> None:
    """Keep the organiser's answers (the new address, the dates, the columns of each reference
    file, gold files given for phases that had none)."""
    TaskImport.objects.filter(pk=pending.pk).update(options=options.as_json())
    pending.options = options.as_json()
    for index, gold in golds.items():
        stored = StoredFile.of(name=safe_file_name(gold.name), content=gold.content)
        stored.save()
        TaskImportGold.objects.filter(pending=pending, phase_index=index).delete()
        TaskImportGold.objects.create(pending=pending, phase_index=index, file=stored)


@transaction.atomic
def import_discard(*, pending: TaskImport) -> None:
    pending.delete()


@transaction.atomic
def import_confirm(*, pending: TaskImport, options: ImportOptions) -> Task:
    """Create the task of a pending import with the organiser's answers, and let the upload go."""
    locked = TaskImport.objects.select_for_update().filter(pk=pending.pk).first()
    if locked is None:
        raise errors.IMPORT_NOT_PENDING.error(FORM_FIELD)
    content = bytes(StoredFile.objects.values_list("content", flat=True).get(pk=locked.file_id))
    bundle = open_bundle(content, name=pending.file.name)
    task = task_import(organiser=pending.user, bundle=bundle, plan=plan_of(bundle, options), options=options)
    locked.delete()
    return task


def _phase_options(phase: PhasePlan) -> dict:
    """The settings of a phase to create, with its gold file if it has one."""
    gold = {} if phase.gold is None else {"gold_name": phase.gold.name, "gold_content": phase.gold.content}
    return {**{name: getattr(phase, name) for name in PHASE_POLICIES}, "split_seed": phase.split_seed, **gold}


def _reserve_ids(ids: list[int]) -> bool:
    """Whether the runs keep the ids they had (so that their index and the board name them as
    the site they came from did): where every id is above every submission's here, as on a fresh
    site. On PostgreSQL the ids are then taken from the sequence first, so that no upload made
    meanwhile can be given one of them."""
    top = Submission.objects.aggregate(top=Max("pk"))["top"] or 0
    if not ids or min(ids) <= top:
        return False
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            sequence = "pg_get_serial_sequence(%s, 'id')"
            cursor.execute(f"SELECT nextval({sequence})", [Submission._meta.db_table])
            if cursor.fetchone()[0] >= min(ids):  # ids handed out and rolled back: the sequence is past them
                return False
            cursor.execute(f"SELECT setval({sequence}, %s)", [Submission._meta.db_table, max(ids)])
    return True


def _decision(*, task: Task, kind: str, team: Team, reason: str, at, submission: Submission | None = None) -> None:
    """The record of an organiser's decision the task came with (who took it is not known here)."""
    OrganiserAction.objects.create(
        task=task.community.task, kind=kind, team=team, submission=submission, reason=reason, created_at=at
    )


def _part_create(
    *, plan: TaskPlan, organiser, slug: str, title: str, parent: Task | None = None
) -> tuple[Task, dict[str, Phase]]:
    """A task (or a subtask of ``parent``) of ``plan``: its phases in time order, each with its
    gold file (or waiting for it) and data files; returns it, and its phases by slug."""
    first, *others = sorted(plan.phases, key=lambda phase: phase.opens_at)
    task = task_create(
        organiser=organiser,
        slug=slug,
        title=title,
        description=plan.description,
        labels=list(plan.labels),
        outputs=plan.outputs,
        primary_metric=plan.primary_metric,
        opens_at=first.opens_at,
        closes_at=first.closes_at,
        phase_name=first.name,
        phase_slug=first.slug,
        registration=plan.registration,
        terms=plan.terms,
        ordinal=plan.ordinal,
        parent=parent,
        **_phase_options(first),
    )
    if plan.overall_method:
        task_update(
            task=task, settings={"overall_method": plan.overall_method, "overall_columns": plan.overall_columns}
        )
    phases = {first.slug: phase_update(phase=task.phases.get(), settings={"description": first.description})}
    for phase in others:
        phases[phase.slug] = phase_create(
            task=task,
            name=phase.name,
            slug=phase.slug,
            opens_at=phase.opens_at,
            closes_at=phase.closes_at,
            description=phase.description,
            **_phase_options(phase),
        )
    for phase in plan.phases:
        for data_file in phase.data_files:
            phase_file_add(
                phase=phases[phase.slug], title=data_file.title, name=data_file.name, content=data_file.content
            )
    return task, phases


@transaction.atomic
def task_import(*, organiser, bundle: SafeZip, plan: TaskPlan, options: ImportOptions) -> Task:
    """Create the task of ``plan`` at ``options.slug``: its phases (in time order) with their
    gold and data files (a phase without one waits for it), then its teams and runs, through the
    services a person's actions go through, in one transaction. A divided task's subtasks take
    their addresses from the new one (:func:`subtask_slug`)."""
    if not plan.ready:
        raise errors.IMPORT_NEEDS_LABELS.error(FORM_FIELD)
    title = options.title or plan.title
    if plan.divided:
        task = task_with_subtasks_create(
            organiser=organiser,
            slug=options.slug,
            title=title,
            description=plan.description,
            registration=plan.registration,
            terms=plan.terms,
        )
        parts = []
        for subtask in plan.subtasks:
            slug = subtask_slug(parent=options.slug, old_parent=plan.slug, old=subtask.slug)
            _, phases = _part_create(plan=subtask, organiser=organiser, slug=slug, title=subtask.title, parent=task)
            parts.append((subtask, phases))
    else:
        task, phases = _part_create(plan=plan, organiser=organiser, slug=options.slug, title=title)
        parts = [(plan, phases)]
    _teams_and_runs(task=task, bundle=bundle, teams=plan.teams, parts=parts)
    results_changed(task)
    return task


def _teams_and_runs(
    *, task: Task, bundle: SafeZip, teams: tuple[TeamPlan, ...], parts: list[tuple[TaskPlan, dict[str, Phase]]]
) -> None:
    """The teams (of the task people register for), then the runs of every part in their
    original order (so that runs uploaded within the same moment keep their order), each
    validated against its phase's gold file; the queued ones are scored once the transaction
    commits."""
    now = timezone.now()
    created = {}
    for team in teams:
        created[team.name] = Team.objects.create(
            task=task.community.task,
            name=team.name,
            created_at=team.created_at or now,
            system_name=team.system_name,
            system_description=team.system_description,
            paper_url=team.paper_url,
            removed_at=team.removed_at,
            removed_reason=team.removed_reason,
        )
        if team.removed_at:
            _decision(
                task=task,
                kind=OrganiserAction.Kind.REMOVE_TEAM,
                team=created[team.name],
                reason=team.removed_reason,
                at=team.removed_at,
            )
    runs = sorted(
        ((run, phases[run.phase]) for plan, phases in parts for run in plan.runs), key=lambda r: r[0].original_id
    )
    keep_ids = _reserve_ids([run.original_id for run, _ in runs])
    queued = []
    for run, phase in runs:
        content = read_named(
            bundle, path=run.path, manifest="task.yaml", where=f"the run {run.original_id}", sha256=run.sha256
        )
        try:
            kind, status, failure = (
                prediction_kind(gold=kept_gold(phase), name=run.name, content=content),
                Submission.Status.QUEUED,
                "",
            )
        except ValidationError as error:
            details = run.failure or " ".join(error.messages)
            kind, status, failure = (
                run.kind,
                Submission.Status.FAILED,
                errors.IMPORTED_RUN_INVALID.format(details=details),
            )
        stored = StoredFile.of(name=run.name, content=content)
        stored.save()
        submission = Submission.objects.create(
            pk=run.original_id if keep_ids else None,
            phase=phase,
            team=created[run.team],
            file=stored,
            kind=kind,
            description=run.description,
            status=status,
            failure=failure,
            created_at=run.uploaded_at,
            chosen=run.chosen,
            contrastive=run.contrastive,
            disqualified_at=run.disqualified_at,
            disqualified_reason=run.disqualified_reason,
        )
        if run.disqualified_at:
            _decision(
                task=task,
                kind=OrganiserAction.Kind.DISQUALIFY,
                team=submission.team,
                submission=submission,
                reason=run.disqualified_reason,
                at=run.disqualified_at,
            )
        if status == Submission.Status.QUEUED:
            queued.append(submission.pk)
    enqueue_on_commit(queued)
