"""A competition's phases as the task, or as its subtasks (one a track: :mod:`.tracks`): what each
part scores, read from its gold files (one label column, or several outputs), each gold file
checked against it as an upload is, and its phases one after another.

A part scores *outputs* when one of its gold files has several label columns (the outputs are
that file's columns, with the labels of all its gold files of those columns: 0 and 1 where a
column holds nothing else, as :mod:`scoring.engine.outputs` reads a gold file); otherwise its
labels are those the organiser gives, or those of its gold files in their natural order. A
phase whose gold file does not fit waits for one, and says why. Where two phases of a part
overlap (side by side on the other platform, now in one track by the organiser's choice), the
earlier closes when the later opens, and the notes say so.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

from django.core.exceptions import ValidationError

from leaderboard.bundles import reference
from leaderboard.bundles.files import with_gold_facts
from leaderboard.bundles.plan import ImportOptions, PhasePlan
from leaderboard.uploads import clean_outputs
from scoring.engine.schemes import LABEL_VALUES, Output, Scheme


def one_after_another(phases: list[PhasePlan], notes: list[str], *, part: str) -> list[PhasePlan]:
    """The phases in time order, each closing at the latest when the next opens (the notes say
    where that changes a date). Phases that open at the same moment are refused before this
    (:func:`leaderboard.bundles.tracks.grouped`)."""
    ordered = sorted(phases, key=lambda phase: phase.opens_at)
    for position, (earlier, later) in enumerate(pairwise(ordered)):
        if earlier.closes_at > later.opens_at:
            where = f"in {part}" if part else "here"
            notes.append(
                f"{earlier.name}: it ran until {earlier.closes_at:%Y-%m-%d %H:%M} there, beside {later.name}; "
                f"{where} it closes when that one opens ({later.opens_at:%Y-%m-%d %H:%M} UTC)."
            )
            ordered[position] = replace(earlier, closes_at=later.opens_at)
    return ordered


def scheme_of(
    phases: list[PhasePlan],
    options: ImportOptions,
    notes: list[str],
    *,
    part: str,
    shared: frozenset[str] = frozenset(),
) -> Scheme:
    """What a part scores, from its phases' gold files (``part``: the subtask's name, ``""`` for
    the task itself). The gold files of the phases in every subtask (``shared``, by slug: a
    trial phase of one track's data) count only where the part's own phases have none."""
    own = [phase for phase in phases if phase.gold is not None and phase.slug not in shared]
    golds = [reference.columns_in(phase.gold.content) for phase in own or phases if phase.gold is not None]
    several = [gold for gold in golds if len(gold) > 1]
    if several:
        names = list(several[0])
        values = {name: set().union(*(gold[name] for gold in several if name in gold)) for name in names}
        outputs = tuple(
            Output(name, LABEL_VALUES if values[name] <= set(LABEL_VALUES) else reference.label_order(values[name]))
            for name in names
        )
        try:
            return Scheme(outputs=clean_outputs(outputs))
        except ValidationError as error:
            notes.append(f"{part or 'The reference data'}: its outputs cannot be scored: {' '.join(error.messages)}")
            return Scheme()
    found = set().union(*(gold.get("label", set()) for gold in golds))
    return Scheme(labels=_labels(options, found, notes, part=part))


def _labels(options: ImportOptions, found: set[str], notes: list[str], *, part: str) -> tuple[str, ...]:
    """The labels: those the organiser gives, in their order (the gold files are then checked
    against them), except in a subtask whose gold files hold others, which keeps its own; else
    those of the gold files, in their natural order; none when they hold fewer than two (the
    import asks for them)."""
    natural = reference.label_order(found) if len(found) >= 2 else ()
    given = tuple(options.labels)
    if not given:
        return natural
    if found and set(given) != found:
        found_text = ", ".join(reference.label_order(found))
        if part and natural:
            notes.append(
                f"{part}: the labels given ({', '.join(given)}) are not those of its reference data ({found_text}): "
                "it keeps its own."
            )
            return natural
        notes.append(
            f"The labels given ({', '.join(given)}) are not those of the reference data ({found_text}): a gold file "
            "without one of them, or with another, waits for a new one."
        )
    return given


def checked(phase: PhasePlan, scheme: Scheme, *, manifest: str) -> PhasePlan:
    """The phase's gold file checked as an upload's against what the part scores; refused (or
    nothing to score yet), the phase waits for one, and says why."""
    if phase.gold is None:
        return phase
    if not scheme.outputs and len(scheme.labels) < 2:
        found = ", ".join(sorted(reference.labels_in(phase.gold.content))) or "none"
        return replace(phase, gold=None, gold_problem=f"its reference data holds fewer than two labels ({found})")
    try:
        return with_gold_facts(phase, scheme, manifest=manifest, where="reference data")
    except ValidationError as error:
        return replace(phase, gold=None, gold_problem=" ".join(error.messages).rstrip("."))
