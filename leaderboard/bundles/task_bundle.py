"""Reading a task exported from this site (:mod:`leaderboard.bundles.export`) into a plan.

``task.yaml`` is read field by field with what each must be; the files it names must be in the
bundle with the SHA-256 it gives; gold files must be valid uploads with the task's labels. The
teams and runs are read only when the organiser brings them (:attr:`ImportOptions.with_runs`).
A kept split seed makes the scores of each part the same as before; a new edition (dates moved)
draws a new one, as a new phase does.

Version 2 adds two things, and reads version 1 as it always was: a phase may have no gold file
(``gold: null``: it waited for it, and waits again), and a task divided into subtasks lists
them (``subtasks``, each with its ``task`` settings and ``phases``; each run names its
``subtask``), sharing the task's registration, terms and teams.
"""

from __future__ import annotations

import re
from dataclasses import replace

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from leaderboard import errors
from leaderboard.bundles.documents import Field
from leaderboard.bundles.export import FORMAT, MANIFEST, VERSION
from leaderboard.bundles.files import named_file, read_named, with_gold_facts
from leaderboard.bundles.plan import ImportOptions, PhasePlan, RunPlan, TaskPlan, TeamPlan
from leaderboard.bundles.zips import FORM_FIELD, SafeZip
from leaderboard.models import (
    DESCRIPTION_MAX_LENGTH,
    MAX_CONTRASTIVE_RUNS,
    MAX_PRIVATE_PERCENT,
    Counting,
    Feedback,
    FinalPart,
    Registration,
    Submission,
    Visibility,
    metric_choices,
)
from leaderboard.names import canonical_name, lookalike_key, name_key
from leaderboard.uploads import clean_labels, clean_outputs, safe_file_name
from scoring.engine.aggregate import METHODS
from scoring.engine.schemes import Output, Scheme

SOURCE = "a task exported from this site (task.yaml)"
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
MAX_PHASES = 20
MAX_SUBTASKS = 20


def _slug(field: Field, *, max_length: int) -> str:
    text = field.text(max_length=max_length)
    if not SLUG.match(text):
        raise field.wrong("an address of letters, digits, hyphens and underscores")
    return text


def _sha256(field: Field) -> str:
    text = field.text()
    if not SHA256.match(text):
        raise field.wrong("a SHA-256 in 64 hexadecimal digits")
    return text


def _labels(field: Field) -> tuple[str, ...]:
    try:
        return tuple(clean_labels(field.strings()))
    except ValidationError as error:
        raise field.wrong("at least two different labels (" + " ".join(error.messages) + ")") from None


def _scheme(task: Field) -> Scheme:
    """The task's labels, or (``outputs``: a task with several labels an item) its outputs."""
    outputs = task.child("outputs")
    if not outputs.value:
        return Scheme(labels=_labels(task.child("labels")), ordinal=task.child("ordinal").boolean())
    found = tuple(
        Output(item.child("name").text(max_length=200), _labels(item.child("labels"))) for item in outputs.items()
    )
    try:
        return Scheme(outputs=clean_outputs(found))
    except ValidationError as error:
        raise outputs.wrong("at least two outputs of two labels or more (" + " ".join(error.messages) + ")") from None


WAITED = "it waited for its gold file on the site it came from"


def _phase(bundle: SafeZip, field: Field, scheme: Scheme, *, keep_seed: bool, version: int) -> PhasePlan:
    gold = field.child("gold").mapping(required=version < 2)  # version 2: none while the phase waits for it
    opens_at, closes_at = field.child("opens_at").moment(), field.child("closes_at").moment()
    if closes_at <= opens_at:
        raise field.child("closes_at").wrong(f"a moment after opens_at ({opens_at:%Y-%m-%d %H:%M} UTC)")
    seed = field.child("split_seed").text(required=False, default="0", max_length=40)
    if not seed.isdigit():
        raise field.child("split_seed").wrong("decimal digits")
    data_files = tuple(
        named_file(
            bundle,
            path=item.child("file").text(),
            manifest=MANIFEST,
            where=f"{item.path}.file",
            sha256=_sha256(item.child("sha256")),
            title=item.child("title").text(required=False, max_length=120),
        )
        for item in field.child("data_files").items(required=False)
    )
    phase = PhasePlan(
        name=field.child("name").text(max_length=80),
        slug=_slug(field.child("slug"), max_length=40),
        description=field.child("description").text(required=False),
        opens_at=opens_at,
        closes_at=closes_at,
        max_per_day=field.child("max_per_day").integer(),
        max_total=field.child("max_total").integer(),
        counting=field.child("counting").choice(Counting.values),
        visibility=field.child("visibility").choice(Visibility.values),
        feedback=field.child("feedback").choice(Feedback.values),
        private_percent=field.child("private_percent").integer(required=False, maximum=MAX_PRIVATE_PERCENT),
        final_part=field.child("final_part").choice(FinalPart.values, required=False, default=FinalPart.PRIVATE),
        contrastive_runs=field.child("contrastive_runs").integer(required=False, maximum=MAX_CONTRASTIVE_RUNS),
        split_seed=seed if keep_seed else None,
        gold=named_file(
            bundle,
            path=gold.child("file").text(),
            manifest=MANIFEST,
            where=f"{field.path}.gold.file",
            sha256=_sha256(gold.child("sha256")),
        )
        if gold.value
        else None,
        gold_problem="" if gold.value else WAITED,
        data_files=data_files,
    )
    return with_gold_facts(phase, scheme, manifest=MANIFEST, where=f"{field.path}.gold.file")


def _overall_method(field: Field) -> str:
    """The task's overall ranking: a method's key, or none (empty or absent)."""
    method = field.text(required=False)
    if method and method not in METHODS:
        raise field.wrong(f"one of {', '.join(METHODS)}, or nothing (no overall ranking)")
    return method


def _team(field: Field) -> TeamPlan:
    removed = field.child("removed").mapping(required=False)
    paper_url = field.child("paper_url").text(required=False, max_length=200)
    if paper_url:
        try:
            URLValidator(schemes=["http", "https"])(paper_url)
        except ValidationError:
            raise field.child("paper_url").wrong("an http or https address") from None
    name = field.child("name").text(max_length=80)
    try:
        canonical = canonical_name(name)
    except ValidationError as error:
        raise field.child("name").wrong("a team name (" + " ".join(error.messages) + ")") from None
    if not canonical or canonical != name:
        raise field.child("name").wrong("a team name in its canonical form (single spaces, NFKC)")
    return TeamPlan(
        name=name,
        created_at=field.child("created_at").moment(required=False),
        system_name=field.child("system_name").text(required=False, max_length=120),
        system_description=field.child("system_description").text(required=False),
        paper_url=paper_url,
        members=tuple(field.child("members").strings()) if field.child("members").present else (),
        removed_at=removed.child("at").moment() if removed.value else None,
        removed_reason=removed.child("reason").text(required=False) if removed.value else "",
    )


def _run(bundle: SafeZip, field: Field, *, phases: dict[str, dict[str, bool]], teams: set[str]) -> tuple[str, RunPlan]:
    """A run, and the subtask it belongs to (``""`` in a task without subtasks): ``phases``
    holds, for each subtask, its phases' slugs and whether each has a gold file."""
    subtask = ""
    if set(phases) != {""}:
        subtask = field.child("subtask").text()
        if subtask not in phases:
            raise field.child("subtask").wrong("the slug of a subtask listed under subtasks")
    phase = field.child("phase").text()
    if phase not in phases[subtask]:
        where = f"the subtask {subtask}" if subtask else "phases"
        raise field.child("phase").wrong(f"the slug of a phase listed under {where}")
    if not phases[subtask][phase]:
        raise field.child("phase").wrong("a phase with a gold file (a run is scored against it)")
    team = field.child("team").text()
    if team not in teams:
        raise field.child("team").wrong("the name of a team listed under teams")
    path = field.child("file").text()
    sha256 = _sha256(field.child("sha256"))
    read_named(bundle, path=path, manifest=MANIFEST, where=f"{field.path}.file", sha256=sha256)
    disqualified = field.child("disqualified").mapping(required=False)
    return subtask, RunPlan(
        original_id=field.child("id").integer(minimum=1),
        phase=phase,
        team=team,
        path=path,
        name=safe_file_name(field.child("name").text(max_length=200)),
        sha256=sha256,
        kind=field.child("kind").choice(Submission.Kind.values),
        uploaded_at=field.child("uploaded_at").moment(),
        description=field.child("description").text(required=False, max_length=DESCRIPTION_MAX_LENGTH),
        failure=field.child("failure").text(required=False),
        chosen=field.child("chosen").boolean(),
        contrastive=field.child("contrastive").integer(required=False, minimum=1, maximum=MAX_CONTRASTIVE_RUNS) or None,
        disqualified_at=disqualified.child("at").moment() if disqualified.value else None,
        disqualified_reason=disqualified.child("reason").text(required=False) if disqualified.value else "",
    )


def _version(root: Field) -> int:
    found_format = root.child("format").text(required=False)
    if found_format != FORMAT:
        raise errors.BUNDLE_VERSION.error(
            FORM_FIELD, file=MANIFEST, where="format", found=found_format, expected=FORMAT
        )
    version = root.child("version").integer(minimum=1)
    if version > VERSION:
        raise errors.BUNDLE_VERSION.error(
            FORM_FIELD, file=MANIFEST, where="version", found=version, expected=f"versions up to {VERSION}"
        )
    return version


def _part(bundle: SafeZip, task: Field, phases_field: Field, *, keep_seed: bool, version: int) -> TaskPlan:
    """A task that holds phases (the task, or one of its subtasks): its labels, ranking and
    phases."""
    scheme = _scheme(task)
    phase_fields = list(phases_field.items())
    if not phase_fields or len(phase_fields) > MAX_PHASES:
        raise phases_field.wrong(f"a list of 1 to {MAX_PHASES} phases")
    phases = tuple(_phase(bundle, field, scheme, keep_seed=keep_seed, version=version) for field in phase_fields)
    slugs = [phase.slug for phase in phases]
    if len(set(slugs)) != len(slugs):
        raise phases_field.wrong("phases with different slugs")
    return TaskPlan(
        source=SOURCE,
        title=task.child("title").text(max_length=200),
        description=task.child("description").text(required=False),
        labels=scheme.labels,
        outputs=scheme.outputs,
        primary_metric=task.child("primary_metric").choice(dict(metric_choices())),
        ordinal=scheme.ordinal,
        overall_method=_overall_method(task.child("overall_method")),
        overall_columns=task.child("overall_columns").text(
            required=False, default=scheme.default_overall_set, max_length=1000
        ),
        slug=task.child("slug").text(required=False, max_length=60),
        phases=phases,
    )


def _subtasks(bundle: SafeZip, field: Field, *, keep_seed: bool, version: int) -> tuple[TaskPlan, ...]:
    items = list(field.items())
    if len(items) > MAX_SUBTASKS:
        raise field.wrong(f"a list of at most {MAX_SUBTASKS} subtasks")
    subtasks = []
    for item in items:
        task = item.child("task").mapping()
        _slug(task.child("slug"), max_length=60)
        subtasks.append(_part(bundle, task, item.child("phases"), keep_seed=keep_seed, version=version))
    slugs = [subtask.slug for subtask in subtasks]
    if len(set(slugs)) != len(slugs):
        raise field.wrong("subtasks with different slugs")
    return tuple(subtasks)


def _teams_and_runs(
    bundle: SafeZip, root: Field, parts: tuple[TaskPlan, ...], *, divided: bool
) -> tuple[tuple[TeamPlan, ...], dict[str, tuple[RunPlan, ...]]]:
    """The teams, and the runs of each part (by its slug; ``""`` in a task without subtasks)."""
    teams = tuple(_team(field) for field in root.child("teams").items(required=False))
    if any(len({key(team.name) for team in teams}) != len(teams) for key in (name_key, lookalike_key)):
        raise root.child("teams").wrong("teams whose names differ, and do not look alike, as on the site")
    phases = {part.slug if divided else "": {p.slug: p.gold is not None for p in part.phases} for part in parts}
    names = {team.name for team in teams}
    runs = [_run(bundle, field, phases=phases, teams=names) for field in root.child("runs").items(required=False)]
    chosen = [(subtask, run.team, run.phase) for subtask, run in runs if run.chosen]
    if len(set(chosen)) != len(chosen):
        raise root.child("runs").wrong("at most one chosen run per team in each phase")
    marked = [(subtask, run.team, run.phase, run.contrastive) for subtask, run in runs if run.contrastive]
    if len(set(marked)) != len(marked) or any(run.chosen and run.contrastive for _, run in runs):
        raise root.child("runs").wrong("each contrastive number once per team in each phase, never on a chosen run")
    by_part = {key: tuple(run for subtask, run in runs if subtask == key) for key in phases}
    return teams, by_part


def read_task_bundle(bundle: SafeZip, document: Field, options: ImportOptions) -> TaskPlan:
    """The plan of the exported task ``document`` (``task.yaml``, read) in ``bundle``."""
    root = document.mapping()
    version = _version(root)
    task = root.child("task").mapping()
    keep_seed = options.first_opens is None
    divided = version >= 2 and root.child("subtasks").present
    if divided:
        if root.child("phases").present:
            raise root.child("phases").wrong("no phases: a task divided into subtasks holds them in its subtasks")
        parts = _subtasks(bundle, root.child("subtasks"), keep_seed=keep_seed, version=version)
    else:
        parts = (_part(bundle, task, root.child("phases"), keep_seed=keep_seed, version=version),)
    teams: tuple[TeamPlan, ...] = ()
    if options.with_runs:
        teams, runs = _teams_and_runs(bundle, root, parts, divided=divided)
        parts = tuple(replace(part, runs=runs[part.slug if divided else ""]) for part in parts)
    notes = []
    if any(part.runs for part in parts):
        notes.append(
            "Teams come without members: their members' accounts are on the site the task came from. Their runs "
            "are scored again here, by the same engine, against the same gold files."
        )
    if options.first_opens is not None and any(phase.private_percent for part in parts for phase in part.phases):
        notes.append("Dates are moved: each split phase draws a new seed for its private items (a new edition).")
    shared = {
        "source": SOURCE,
        "registration": task.child("registration").choice(Registration.values, required=False, default="open"),
        "terms": task.child("terms").text(required=False),
        "teams": teams,
        "notes": tuple(notes),
    }
    if divided:
        return TaskPlan(
            title=task.child("title").text(max_length=200),
            description=task.child("description").text(required=False),
            slug=task.child("slug").text(required=False, max_length=60),
            labels=(),
            primary_metric="",
            phases=(),
            divided=True,
            subtasks=parts,
            **shared,
        )
    return replace(parts[0], **shared)
