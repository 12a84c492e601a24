"""Moving in from CodaLab and Codabench: a result-submission competition bundle
(``competition.yaml`` v1.5 of CodaLab, or ``version: 2`` of Codabench) read into a plan.

What comes over: the title, the description and the pages (as text: :mod:`.pages`), the terms,
whether registration needs approval, the phases with their names, descriptions, dates and
limits, the counting rule (Codabench's ``submission_rule``, CodaLab's
``force_submission_to_leaderboard``), a hidden leaderboard, the files participants downloaded
(``public_data``, ``starting_kit``), and each phase's reference data as its gold file when it
is a labels file (:mod:`.competition_files`, :mod:`.reference`). A phase whose reference data
is not one (none in the bundle, a header without labels, the inputs of a scoring program that
ran participants' code, an unreadable file) comes over all the same and waits for its gold file;
the plan says why. What cannot come over (a scoring or ingestion program, a docker image, code
submissions, a logo, the leaderboard's own columns...) is listed in the plan's notes, for the
organiser to read before confirming.

Dates as both platforms write them (YAML dates, ISO 8601, Codabench's ``1-1-2026``), in UTC. A
CodaLab phase ends when a later one starts (phases that start together end together); a phase
without an end (the last) ends with the competition, else a year after it opens, which the
notes say. Phases that ran side by side there (a SemEval task's tracks, one per language and
subtask) become subtasks, one per track (:mod:`.tracks`), each scoring one label column or
several outputs (:mod:`.parts`); where the organiser puts overlapping phases in one track, the
earlier closes when the later opens, and the notes say so. Nothing else moves a date.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from django.utils.text import slugify

from leaderboard import errors
from leaderboard.bundles import pages, parts, reference, tracks
from leaderboard.bundles.competition_files import LINE_NUMBERS, download, gold_of
from leaderboard.bundles.documents import Field
from leaderboard.bundles.plan import ImportOptions, PhasePlan, TaskPlan
from leaderboard.bundles.zips import SafeZip
from leaderboard.models import DEFAULT_MAX_PER_DAY, DEFAULT_MAX_TOTAL, Counting, Phase, Registration, Visibility

MANIFEST = "competition.yaml"
CODALAB = "a CodaLab competition (competition.yaml v1.5)"
CODABENCH = "a Codabench competition (competition.yaml version 2)"
DEFAULT_PRIMARY_METRIC = "macro_f1"
OPEN_ENDED = dt.timedelta(days=365)
SUBMISSION_RULES = {
    "Force_Last": Counting.LATEST,
    "Force_Latest_Multiple": Counting.LATEST,
    "Force_Best": Counting.BEST,
    "Add_And_Delete": Counting.CHOSEN,
    "Add_And_Delete_Multiple": Counting.CHOSEN,
}
V15_READ = {
    "title",
    "description",
    "html",
    "phases",
    "has_registration",
    "end_date",
    "start_date",
    "image",
    "leaderboard",
    "force_submission_to_leaderboard",
    "competition_docker_image",
}
V2_READ = {
    "version",
    "title",
    "description",
    "pages",
    "terms",
    "phases",
    "tasks",
    "registration_auto_approve",
    "image",
    "leaderboards",
    "docker_image",
    "solutions",
}


def _slugs(names: list[str]) -> list[str]:
    """A distinct address for each phase, from its name."""
    slugs: list[str] = []
    for index, name in enumerate(names, start=1):
        slug = slugify(name)[:36].rstrip("-") or f"phase-{index}"
        while slug in slugs:
            slug = f"{slug[:33]}-{index}"
        slugs.append(slug)
    return slugs


def _limit(field: Field, default: int, notes: list[str], *, what: str, phase: str) -> int:
    value = field.integer(required=False, default=-1)
    if value < 0:
        return default
    if value == 0:
        notes.append(f"{phase}: {what} was 0 (no limit there); here it is {default:,}.")
        return default
    return value


def _pages_v15(bundle: SafeZip, root: Field, notes: list[str]) -> tuple[str, str]:
    html = root.child("html").mapping(required=False)
    sections, terms = [], ""
    for key in sorted(html.value, key=lambda key: str(key).lower() != "overview"):  # the overview first, as there
        path = html.child(key).text()
        if not bundle.has(path):
            notes.append(f"The page {key!r} ({path}) is not in the bundle: left out.")
            continue
        text = pages.page_text(bundle.read(path), name=path)
        if str(key).lower() in ("terms", "terms_and_conditions"):
            terms = text
        elif text:
            sections.append((str(key).replace("_", " ").capitalize(), text))
    return _description(root, sections), terms


def _pages_v2(bundle: SafeZip, root: Field, notes: list[str]) -> tuple[str, str]:
    sections = []
    for page in root.child("pages").items(required=False):
        path = page.child("file").text()
        if not bundle.has(path):
            notes.append(f"The page {path} is not in the bundle: left out.")
            continue
        sections.append(
            (page.child("title").text(required=False, default=path), pages.page_text(bundle.read(path), name=path))
        )
    terms_path = root.child("terms").text(required=False)
    terms = pages.page_text(bundle.read(terms_path), name=terms_path) if terms_path and bundle.has(terms_path) else ""
    if terms_path and not terms:
        notes.append(f"The terms ({terms_path}) are not in the bundle: the task has none; add them in its settings.")
    return _description(root, sections), terms


def _description(root: Field, sections: list[tuple[str, str]]) -> str:
    parts = [pages.clean_text(root.child("description").text(required=False))]
    parts += [f"# {title}\n\n{text}" for title, text in sections if text]
    return "\n\n".join(part for part in parts if part)


def _dates(starts: list[dt.datetime], ends: list[dt.datetime | None], names: list[str], *, last, notes: list[str]):
    """Each phase's closing: its end, else when a later phase opens (CodaLab's rule: phases that
    open together, tracks, close together), else the competition's end (``last``), else a year
    after it opens."""
    closes, open_ended = [], {}
    for index, (start, end) in enumerate(zip(starts, ends, strict=True)):
        close = end or min((other for other in starts if other > start), default=None) or last
        if close is None:
            close = start + OPEN_ENDED
            open_ended.setdefault(close, []).append(names[index])
        if close <= start:
            notes.append(f"{names[index]}: it closed ({close:%Y-%m-%d}) before it opened; here it runs a day.")
            close = start + dt.timedelta(days=1)
        closes.append(close)
    for close, phases in open_ended.items():
        notes.append(
            f"{', '.join(phases)}: no end date there; here {'it closes' if len(phases) == 1 else 'each closes'} on "
            f"{close:%Y-%m-%d} (change it on its page)."
        )
    return closes


def read_competition(bundle: SafeZip, document: Field, options: ImportOptions) -> TaskPlan:
    """The plan of the competition ``document`` (``competition.yaml``, read) in ``bundle``: one
    task, or one subtask per track where phases ran side by side (:mod:`.tracks`)."""
    root = document.mapping()
    version = str(root.child("version").value or "1.5")
    # Codabench's own examples may leave out "version: 2"; their phases are a list, CodaLab's a mapping.
    codabench = version.split(".")[0] == "2" or isinstance(root.child("phases").value, list)
    notes: list[str] = []
    if codabench:
        description, terms = _pages_v2(bundle, root, notes)
        phase_fields = sorted(root.child("phases").items(), key=lambda f: f.child("index").integer(required=False))
        tasks = {
            field.child("index").integer(required=False): field for field in root.child("tasks").items(required=False)
        }
        registration = Registration.OPEN if root.child("registration_auto_approve").boolean() else Registration.APPROVAL
        read_keys = V2_READ
    else:
        description, terms = _pages_v15(bundle, root, notes)
        phases_map = root.child("phases").mapping()
        phase_fields = sorted(
            (phases_map.child(key) for key in phases_map.value),
            key=lambda f: f.mapping().child("phasenumber").integer(required=False),
        )
        tasks = {}
        registration = Registration.APPROVAL if root.child("has_registration").boolean() else Registration.OPEN
        read_keys = V15_READ
    if not phase_fields:
        raise root.child("phases").wrong("at least one phase")
    names = [
        f.child("name" if codabench else "label").text(required=False, default=f"Phase {i}")
        for i, f in enumerate(phase_fields, start=1)
    ]
    starts = [f.child("start" if codabench else "start_date").moment() for f in phase_fields]
    ends = [f.child("end").moment(required=False) if codabench else None for f in phase_fields]
    last = None if codabench else root.child("end_date").moment(required=False)
    closes = _dates(starts, ends, names, last=last, notes=notes)
    counting = _counting(root, codabench, notes)
    visibility = _visibility(root, codabench, notes)
    slugs = _slugs(names)
    phases, questions, slots, scored_there = [], [], [], []
    for index, (field, name) in enumerate(zip(phase_fields, names, strict=True)):
        task_fields = [tasks[i] for i in field.child("tasks").value or [] if i in tasks] if codabench else [field]
        source = task_fields[0] if task_fields else field
        if codabench and len(task_fields) > 1:
            notes.append(
                f"{name}: it had {len(task_fields)} tasks there; the first one's reference data is its gold file."
            )
        if source.child("scoring_program").present:
            scored_there.append(name)
        code = source.child("ingestion_program").present or (
            not codabench and field.child("is_scoring_only").value is False
        )
        if code:
            notes.append(f"{name}: participants submitted code there; here they upload prediction files (id,label).")
        reference_path = source.child("reference_data").text(required=False)
        gold, question, problem = gold_of(
            bundle, reference_path, options.references.get(index), phase_index=index, phase=name, code=code
        )
        if index in options.golds:
            gold, problem = options.golds[index], ""
        if question is not None:
            questions.append(question)
        downloads = [
            download(bundle, field.child(key).text(), title=title)
            for key, title in (("public_data", "Public data"), ("starting_kit", "Starting kit"))
            if field.child(key).present
        ]
        shown = _phase_visibility(field, visibility, codabench, notes, phase=name)
        phases.append(
            PhasePlan(
                name=name[:80],
                slug=slugs[index],
                description=field.child("description").text(required=False),
                opens_at=starts[index],
                closes_at=closes[index],
                max_per_day=_limit(
                    field.child("max_submissions_per_day"),
                    DEFAULT_MAX_PER_DAY,
                    notes,
                    what="the daily limit",
                    phase=name,
                ),
                max_total=_limit(
                    field.child("max_submissions"), DEFAULT_MAX_TOTAL, notes, what="the total limit", phase=name
                ),
                counting=counting,
                visibility=shown,
                feedback=Phase.default_feedback(shown),
                gold=gold,
                gold_problem=problem,
                data_files=tuple(download for download in downloads if download is not None),
            )
        )
        program = source.child("scoring_program").value
        program = program if isinstance(program, str) else ""
        slots.append(tracks.Slot(index, name, starts[index], closes[index], reference_path or "", program))
    if scored_there:
        whose = (
            f"{scored_there[0]}: its scoring program does not"
            if len(scored_there) == 1
            else f"The scoring programs of {tracks.in_words(scored_there)} do not"
        )
        notes.append(f"{whose} come over; here every metric of the suite is computed.")
    if any(phase.gold is not None and LINE_NUMBERS in phase.gold.source for phase in phases):
        notes.append(
            "Reference files without ids: the ids are the line numbers, from 1, and participants' files here give "
            "them (id,label; the sample submissions on the task page show the format)."
        )
    title = root.child("title").text(max_length=200)
    plan = TaskPlan(
        source=CODABENCH if codabench else CODALAB,
        title=title,
        description=description,
        labels=(),
        primary_metric=options.primary_metric or DEFAULT_PRIMARY_METRIC,
        registration=registration,
        terms=terms,
        slug=slugify(title)[:60],
        phases=(),
        questions=tuple(questions),
        bundle_phases=tuple(phase.name for phase in phases),
    )
    plan = _grouped(plan, phases, slots, options, notes)
    notes += _left_out(root, read_keys, codabench)
    return replace(plan, notes=tuple(notes))


def _grouped(
    plan: TaskPlan, phases: list[PhasePlan], slots: list[tracks.Slot], options: ImportOptions, notes: list[str]
) -> TaskPlan:
    """The plan with its phases: in one task, or in one subtask per track (its phases those of
    the track, one after another; a phase of every track in each)."""
    names, recognised = tracks.recognise(slots)
    if not names:
        if options.tracks:
            index, track = next(iter(options.tracks.items()))
            phase = phases[index].name if 0 <= index < len(phases) else "none"
            raise errors.IMPORT_TRACK_UNKNOWN.error(
                f"track-{index}", number=index + 1, phase=phase, track=track, known=tracks.NO_TRACKS
            )
        return _part(plan, phases, options, notes, name="")
    choices = tracks.settle(
        names,
        recognised,
        chosen=options.tracks,
        columns=lambda index: reference.columns_in(phases[index].gold.content) if phases[index].gold else None,
    )
    held = [(number, group) for number, group in enumerate(tracks.grouped(choices, len(names)), start=1) if group]
    notes.append(
        f"Its phases ran in {len(names)} tracks side by side there ({', '.join(names)}): "
        + (
            f"here they are {len(held)} subtasks, one a track, sharing registration, terms and teams."
            if len(held) > 1
            else "all in one track by your choice, here they are one task."
        )
    )
    plan = replace(plan, tracks=names, track_choices=choices)
    if len(held) == 1:
        return _part(plan, [phases[choice.phase_index] for choice in held[0][1]], options, notes, name="")
    shared = frozenset(phases[choice.phase_index].slug for choice in choices if choice.track == tracks.EVERY_TRACK)
    subtasks = tuple(
        _part(
            replace(
                plan,
                title=f"{plan.title}: {names[number - 1]}"[:200],
                description="",
                terms="",
                slug=f"{plan.slug}-{slugify(names[number - 1])}"[:60],
                questions=(),
                bundle_phases=(),
                tracks=(),
                track_choices=(),
            ),
            [phases[choice.phase_index] for choice in group],
            options,
            notes,
            name=names[number - 1],
            shared=shared,
        )
        for number, group in held
    )
    return replace(plan, divided=True, subtasks=subtasks)


def _part(
    plan: TaskPlan,
    phases: list[PhasePlan],
    options: ImportOptions,
    notes: list[str],
    *,
    name: str,
    shared: frozenset[str] = frozenset(),
) -> TaskPlan:
    """``plan`` holding ``phases``, one after another, each gold file checked against what they
    score (:mod:`.parts`; ``shared``: the slugs of the phases in every subtask)."""
    ordered = parts.one_after_another(phases, notes, part=name)
    scheme = parts.scheme_of(ordered, options, notes, part=name, shared=shared)
    return replace(
        plan,
        labels=scheme.labels,
        outputs=scheme.outputs,
        phases=tuple(parts.checked(phase, scheme, manifest=MANIFEST) for phase in ordered),
    )


def _counting(root: Field, codabench: bool, notes: list[str]) -> str:
    if codabench:
        rules = [
            board.child("submission_rule").text(required=False)
            for board in root.child("leaderboards").items(required=False)
        ]
        rule = next((rule for rule in rules if rule), "")
        if rule and rule not in SUBMISSION_RULES:
            notes.append(f"The submission rule {rule!r} has no counterpart: the latest scored run counts.")
        return SUBMISSION_RULES.get(rule, Counting.LATEST)
    if root.child("force_submission_to_leaderboard").boolean():
        return Counting.LATEST
    return Counting.CHOSEN


def _visibility(root: Field, codabench: bool, notes: list[str]) -> str:
    if codabench and any(board.child("hidden").boolean() for board in root.child("leaderboards").items(required=False)):
        notes.append("Its leaderboard was hidden: here results are hidden until each phase closes.")
        return Visibility.AFTER_CLOSE
    return Visibility.PUBLIC


def _phase_visibility(field: Field, visibility: str, codabench: bool, notes: list[str], *, phase: str) -> str:
    """A CodaLab phase may hide its own results (``leaderboard_management_mode: hide_results``)."""
    if codabench or field.child("leaderboard_management_mode").text(required=False) != "hide_results":
        return visibility
    notes.append(f"{phase}: its results were hidden: here its board is hidden until it closes.")
    return Visibility.AFTER_CLOSE


def _left_out(root: Field, read_keys: set[str], codabench: bool) -> list[str]:
    notes = []
    image = root.child("image").text(required=False)
    if image:
        notes.append(f"The logo ({image}) is not shown here.")
    docker = root.child("docker_image" if codabench else "competition_docker_image").text(required=False)
    if docker:
        notes.append(f"The docker image ({docker}) does not come over: nothing runs participants' code here.")
    board = "leaderboards" if codabench else "leaderboard"
    titles = [
        column.child("title").text(required=False) or column.child("label").text(required=False)
        for leaderboard in (root.child(board).items(required=False) if codabench else [])
        for column in leaderboard.child("columns").items(required=False)
    ]
    if not codabench and root.child("leaderboard").present:
        columns = root.child("leaderboard").mapping().child("columns").mapping(required=False)
        titles = [columns.child(key).mapping().child("label").text(required=False) or str(key) for key in columns.value]
    if titles:
        notes.append(
            f"The leaderboard's columns ({', '.join(t for t in titles if t)}) came from its scoring program; here "
            "every metric is computed, raw and calibrated, and the primary metric ranks."
        )
    others = sorted(str(key) for key in root.value if key not in read_keys)
    if others:
        notes.append("Settings with no counterpart here, left out: " + ", ".join(others) + ".")
    return notes
