"""What an import creates, read from a bundle and not yet written: the plan the preview shows
and the import service writes (:func:`leaderboard.services.imports.task_import`).

Every format reads into this one plan: a task exported from this site (``task.yaml``), a
CodaLab competition (``competition.yaml`` v1.5) or a Codabench one (version 2). File contents
are read when the plan is made (gold and data files, a few megabytes) except runs', which the
import reads one at a time from the bundle.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

from leaderboard.models import (
    DEFAULT_MAX_PER_DAY,
    DEFAULT_MAX_TOTAL,
    Counting,
    Feedback,
    FinalPart,
    Visibility,
)
from scoring.engine.schemes import Output, Scheme


@dataclass(frozen=True)
class FilePlan:
    """A file the import stores: its name, its bytes and where in the bundle it came from."""

    name: str
    content: bytes
    source: str
    title: str = ""


@dataclass(frozen=True)
class PhasePlan:
    name: str
    slug: str
    opens_at: dt.datetime
    closes_at: dt.datetime
    gold: FilePlan | None
    """``None``: the bundle has none this site can read (:attr:`gold_problem` says why)."""
    description: str = ""
    max_per_day: int = DEFAULT_MAX_PER_DAY
    max_total: int = DEFAULT_MAX_TOTAL
    counting: str = Counting.LATEST
    visibility: str = Visibility.PUBLIC
    feedback: str = Feedback.FULL
    private_percent: int = 0
    final_part: str = FinalPart.PRIVATE
    contrastive_runs: int = 0
    split_seed: str | None = None
    """The seed of the public/private split, kept where scores are carried over; ``None``: a new one."""
    data_files: tuple[FilePlan, ...] = ()
    gold_problem: str = ""
    gold_items: int = 0
    gold_counts: tuple[tuple[str, int], ...] = ()
    """Items per label of the gold file, as the preview shows them."""


@dataclass(frozen=True)
class TeamPlan:
    name: str
    created_at: dt.datetime | None = None
    system_name: str = ""
    system_description: str = ""
    paper_url: str = ""
    members: tuple[str, ...] = ()
    """The user names of the original site: recorded, never made accounts here."""
    removed_at: dt.datetime | None = None
    removed_reason: str = ""


@dataclass(frozen=True)
class RunPlan:
    original_id: int
    phase: str
    team: str
    path: str
    """Where its file is in the bundle."""
    name: str
    sha256: str
    kind: str
    uploaded_at: dt.datetime
    description: str = ""
    failure: str = ""
    """Why its scoring failed on the site it came from, if it did."""
    chosen: bool = False
    contrastive: int | None = None
    """Its team's contrastive run k, in a phase that takes them."""
    disqualified_at: dt.datetime | None = None
    disqualified_reason: str = ""


@dataclass(frozen=True)
class TaskPlan:
    """A task to create: its settings, phases, and (from an exported task) teams and runs;
    ``notes`` lists what could not come over or was changed on the way, for the organiser to
    read before confirming.

    A task divided into subtasks (``divided``) has no labels and no phases of its own: each of
    its ``subtasks`` is a plan of its own (labels, phases, runs), while registration, terms and
    teams are the parent's, as on the site."""

    source: str
    """What the bundle is, in words ("a task exported from this site", "a CodaLab competition
    (competition.yaml v1.5)"...)."""
    title: str
    labels: tuple[str, ...]
    primary_metric: str
    phases: tuple[PhasePlan, ...]
    description: str = ""
    ordinal: bool = False
    overall_method: str = ""
    overall_columns: str = "table8"
    registration: str = "open"
    terms: str = ""
    slug: str = ""
    """The address it had, a suggestion for the new one."""
    teams: tuple[TeamPlan, ...] = ()
    runs: tuple[RunPlan, ...] = ()
    notes: tuple[str, ...] = ()
    questions: tuple[ReferenceQuestion, ...] = ()
    divided: bool = False
    subtasks: tuple[TaskPlan, ...] = ()
    outputs: tuple[Output, ...] = ()
    """A task with several labels an item: its outputs (``labels`` is then empty)."""
    tracks: tuple[str, ...] = ()
    """A competition whose phases ran side by side: the names of its tracks, in order
    (:mod:`leaderboard.bundles.tracks`); the subtasks are those that hold phases."""
    track_choices: tuple[TrackChoice, ...] = ()
    """Where each phase of such a competition goes, and why."""
    bundle_phases: tuple[str, ...] = ()
    """A competition's phases by name, as the bundle numbers them (from 1: ``--gold N=``,
    ``--track N=``)."""

    @property
    def scheme(self) -> Scheme:
        """What the task scores: its labels, or its outputs."""
        return Scheme(labels=tuple(self.labels), ordinal=self.ordinal, outputs=self.outputs)

    @property
    def scored(self) -> str:
        """What it scores, in words: its labels, or each output with its labels."""
        if self.outputs:
            return "; ".join(f"{output.name} ({', '.join(output.labels)})" for output in self.outputs)
        return ", ".join(self.labels)

    @property
    def ready(self) -> bool:
        """The import can be confirmed: the task (each subtask) has its labels or outputs. A
        phase without a gold file comes over all the same and waits for it."""
        if self.divided:
            return all(subtask.ready for subtask in self.subtasks)
        return len(self.labels) >= 2 or len(self.outputs) >= 2

    def parts(self) -> tuple[TaskPlan, ...]:
        """The plans that hold phases: its subtasks, or the task itself."""
        return self.subtasks if self.divided else (self,)

    def waiting(self) -> list[tuple[TaskPlan, PhasePlan]]:
        """Every phase (of every subtask) that waits for its gold file, with its task."""
        return [(part, phase) for part in self.parts() for phase in part.phases if phase.gold is None]

    def shifted(self, first_opens: dt.date | None) -> TaskPlan:
        """The plan with every date moved by whole days so that the first phase (of any
        subtask) opens on ``first_opens`` at the time of day it opened (next year's edition);
        as it is for ``None``."""
        phases = [phase for part in self.parts() for phase in part.phases]
        if first_opens is None or not phases:
            return self
        first = min(phase.opens_at for phase in phases)
        return self.moved(dt.datetime.combine(first_opens, first.timetz()) - first)

    def moved(self, delta: dt.timedelta) -> TaskPlan:
        """Every date of the plan (and of its subtasks) moved by ``delta``."""

        def move(moment: dt.datetime | None) -> dt.datetime | None:
            return None if moment is None else moment + delta

        return replace(
            self,
            phases=tuple(replace(p, opens_at=p.opens_at + delta, closes_at=p.closes_at + delta) for p in self.phases),
            teams=tuple(replace(t, created_at=move(t.created_at), removed_at=move(t.removed_at)) for t in self.teams),
            runs=tuple(
                replace(r, uploaded_at=r.uploaded_at + delta, disqualified_at=move(r.disqualified_at))
                for r in self.runs
            ),
            subtasks=tuple(subtask.moved(delta) for subtask in self.subtasks),
        )


def subtask_slug(*, parent: str, old_parent: str, old: str) -> str:
    """A subtask's new address under its parent's new one: the old address with the old
    parent's replaced (``semeval-2017-task-4a`` under ``semeval-2018-task-1`` becomes
    ``semeval-2018-task-1a``), else the old one after the new parent's and a hyphen."""
    if old_parent and old.startswith(old_parent) and len(old) > len(old_parent):
        return (parent + old[len(old_parent) :])[:60]
    return f"{parent}-{old}"[:60]


EVERY_TRACK = "all"
"""The track of a phase that goes to every subtask (a trial phase before the tracks open)."""


@dataclass(frozen=True)
class TrackChoice:
    """Where a phase of a competition with tracks goes: a track (its number, from 1) or every
    one (:data:`EVERY_TRACK`), how that was decided (``how``: :data:`RECOGNISED`, :data:`GUESSED`,
    :data:`ALONE` or :data:`CHOSEN`) and why, in words."""

    phase_index: int
    phase: str
    opens_at: dt.datetime
    track: str
    how: str
    reason: str

    @property
    def asked(self) -> bool:
        """A guess, or a default: the preview and the report ask the organiser to check it."""
        return self.how in (GUESSED, ALONE)


RECOGNISED, GUESSED, ALONE, CHOSEN = "recognised", "guessed", "alone", "chosen"


@dataclass(frozen=True)
class ReferenceQuestion:
    """What the preview asks about a phase's reference data when it cannot tell: which file,
    which column holds the ids (or the line numbers) and which the labels."""

    phase_index: int
    phase: str
    files: tuple[str, ...]
    file: str
    columns: tuple[str, ...]
    id_column: str
    label_column: str


LINE_NUMBER = "(line number)"
"""The id "column" of a file with one label per line: ids are line numbers, from 1."""
OUTPUTS = "(each label column: an output)"
"""The label "column" of a reference file of several label columns: a task of several outputs."""


@dataclass(frozen=True)
class ReferenceChoice:
    """The organiser's answer to a :class:`ReferenceQuestion`."""

    file: str = ""
    id_column: str = ""
    label_column: str = ""


@dataclass(frozen=True)
class ImportOptions:
    """What the organiser decides for an import: the new address, whether the runs come too
    (an exported task), when the first phase opens (``None``: the dates as they are), and, for
    a CodaLab or Codabench bundle, the primary metric, the labels' order, how to read each
    phase's reference data, any gold file given instead, and the track of each phase that ran
    side by side with others."""

    slug: str = ""
    title: str = ""
    with_runs: bool = True
    first_opens: dt.date | None = None
    primary_metric: str = ""
    labels: tuple[str, ...] = ()
    references: dict[int, ReferenceChoice] = field(default_factory=dict)
    golds: dict[int, FilePlan] = field(default_factory=dict)
    tracks: dict[int, str] = field(default_factory=dict)
    """The organiser's track of a phase (by index): its number from 1, or :data:`EVERY_TRACK`."""

    def as_json(self) -> dict:
        """The options as stored with a pending import (the gold files are stored apart)."""
        return {
            "slug": self.slug,
            "title": self.title,
            "with_runs": self.with_runs,
            "first_opens": self.first_opens.isoformat() if self.first_opens else None,
            "primary_metric": self.primary_metric,
            "labels": list(self.labels),
            "references": {str(index): [c.file, c.id_column, c.label_column] for index, c in self.references.items()},
            "tracks": {str(index): track for index, track in self.tracks.items()},
        }

    @classmethod
    def of_json(cls, data: dict, *, golds: dict[int, FilePlan] | None = None) -> ImportOptions:
        first_opens = data.get("first_opens")
        return cls(
            slug=data.get("slug", ""),
            title=data.get("title", ""),
            with_runs=data.get("with_runs", True),
            first_opens=dt.date.fromisoformat(first_opens) if first_opens else None,
            primary_metric=data.get("primary_metric", ""),
            labels=tuple(data.get("labels", ())),
            references={int(index): ReferenceChoice(*choice) for index, choice in data.get("references", {}).items()},
            golds=golds or {},
            tracks={int(index): str(track) for index, track in data.get("tracks", {}).items()},
        )
