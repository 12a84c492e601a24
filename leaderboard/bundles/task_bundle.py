"""Reading a task exported from this site (:mod:`leaderboard.bundles.export`) into a plan.

``task.yaml`` is read field by field with what each must be; the files it names must be in the
bundle with the SHA-256 it gives; gold files must be valid uploads with the task's labels. The
teams and runs are read only when the organiser brings them (:attr:`ImportOptions.with_runs`).
A kept split seed makes the scores of each part the same as before; a new edition (dates moved)
draws a new one, as a new phase does.
"""

from __future__ import annotations

import re

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
from leaderboard.uploads import clean_labels, safe_file_name
from scoring.engine.aggregate import METHODS

SOURCE = "a task exported from this site (task.yaml)"
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
MAX_PHASES = 20


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


def _phase(bundle: SafeZip, field: Field, labels: list[str], *, keep_seed: bool) -> PhasePlan:
    gold = field.child("gold").mapping()
    gold_path = gold.child("file").text()
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
            path=gold_path,
            manifest=MANIFEST,
            where=f"{field.path}.gold.file",
            sha256=_sha256(gold.child("sha256")),
        ),
        data_files=data_files,
    )
    return with_gold_facts(phase, labels, manifest=MANIFEST, where=f"{field.path}.gold.file")


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


def _run(bundle: SafeZip, field: Field, *, phases: set[str], teams: set[str]) -> RunPlan:
    phase = field.child("phase").text()
    if phase not in phases:
        raise field.child("phase").wrong("the slug of a phase listed under phases")
    team = field.child("team").text()
    if team not in teams:
        raise field.child("team").wrong("the name of a team listed under teams")
    path = field.child("file").text()
    sha256 = _sha256(field.child("sha256"))
    read_named(bundle, path=path, manifest=MANIFEST, where=f"{field.path}.file", sha256=sha256)
    disqualified = field.child("disqualified").mapping(required=False)
    return RunPlan(
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


def read_task_bundle(bundle: SafeZip, document: Field, options: ImportOptions) -> TaskPlan:
    """The plan of the exported task ``document`` (``task.yaml``, read) in ``bundle``."""
    root = document.mapping()
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
    task = root.child("task").mapping()
    labels = _labels(task.child("labels"))
    keep_seed = options.first_opens is None
    phase_fields = list(root.child("phases").items())
    if not phase_fields or len(phase_fields) > MAX_PHASES:
        raise root.child("phases").wrong(f"a list of 1 to {MAX_PHASES} phases")
    phases = tuple(_phase(bundle, field, list(labels), keep_seed=keep_seed) for field in phase_fields)
    slugs = [phase.slug for phase in phases]
    if len(set(slugs)) != len(slugs):
        raise root.child("phases").wrong("phases with different slugs")
    teams: tuple[TeamPlan, ...] = ()
    runs: tuple[RunPlan, ...] = ()
    if options.with_runs:
        teams = tuple(_team(field) for field in root.child("teams").items(required=False))
        names = {team.name for team in teams}
        if any(len({key(team.name) for team in teams}) != len(teams) for key in (name_key, lookalike_key)):
            raise root.child("teams").wrong("teams whose names differ, and do not look alike, as on the site")
        runs = tuple(
            _run(bundle, field, phases=set(slugs), teams=names) for field in root.child("runs").items(required=False)
        )
        chosen = [(run.team, run.phase) for run in runs if run.chosen]
        if len(set(chosen)) != len(chosen):
            raise root.child("runs").wrong("at most one chosen run per team in each phase")
        marked = [(run.team, run.phase, run.contrastive) for run in runs if run.contrastive]
        if len(set(marked)) != len(marked) or any(run.chosen and run.contrastive for run in runs):
            raise root.child("runs").wrong("each contrastive number once per team in each phase, never on a chosen run")
    notes = []
    if runs:
        notes.append(
            "Teams come without members: their members' accounts are on the site the task came from. Their runs "
            "are scored again here, by the same engine, against the same gold files."
        )
    if options.first_opens is not None and any(phase.private_percent for phase in phases):
        notes.append("Dates are moved: each split phase draws a new seed for its private items (a new edition).")
    return TaskPlan(
        source=SOURCE,
        title=task.child("title").text(max_length=200),
        description=task.child("description").text(required=False),
        labels=labels,
        primary_metric=task.child("primary_metric").choice(dict(metric_choices())),
        ordinal=task.child("ordinal").boolean(),
        overall_method=_overall_method(task.child("overall_method")),
        overall_columns=task.child("overall_columns").text(required=False, default="table8", max_length=1000),
        registration=task.child("registration").choice(Registration.values, required=False, default="open"),
        terms=task.child("terms").text(required=False),
        slug=task.child("slug").text(required=False, max_length=60),
        phases=phases,
        teams=teams,
        runs=runs,
        notes=tuple(notes),
    )
