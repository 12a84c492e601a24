"""Tasks, their phases, teams, submissions and their scores.

The Submission row is the source of truth for scoring (DESIGN.md): its status says where it
is, and its confusion matrix is the sufficient statistic of every metric, so any metric can be
recomputed without re-reading files. Files live in the database (``StoredFile``) so that every
web and worker machine reads the same bytes, and they are deleted with the rows that own them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.validators import MaxValueValidator, URLValidator
from django.db import models
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, Lower
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors
from leaderboard.names import lookalike_key, name_key
from scoring.engine.aggregate import METHODS
from scoring.engine.calibration import calibrate
from scoring.engine.items import pack_items, unpack_items
from scoring.engine.outputs import OutputsReport
from scoring.engine.registry import ITEM_METRICS, ranking_metrics
from scoring.engine.schemes import BOARD_SETS, Output, Scheme
from scoring.engine.suite import Report

ALL_ITEMS, PUBLIC_PART, PRIVATE_PART = "all", "public", "private"
"""What a phase's scores are computed on: every item, or one part of a split test set."""
MAX_PRIVATE_PERCENT = 90
MAX_CONTRASTIVE_RUNS = 9
PRIMARY = "primary"
"""A team's primary run in a phase with contrastive runs: its chosen submission, the one that counts."""
UNMARKED = "unmarked"
CONTRASTIVE_MARK = "contrastive-"
"""Followed by k: the team's contrastive run k."""
PHASE_POLICIES = (
    "max_per_day",
    "max_total",
    "counting",
    "visibility",
    "feedback",
    "private_percent",
    "final_part",
    "contrastive_runs",
)
"""A phase's limits and policies: the fields of :class:`Phase` an organiser may change at any
time beside its name, description and dates, and that a task bundle carries."""
DEFAULT_MAX_PER_DAY = 5
DEFAULT_MAX_TOTAL = 100
DESCRIPTION_MAX_LENGTH = 200
FILE_NAME_MAX_LENGTH = 200


def metric_choices(*, ordinal: bool = True, items: bool = True) -> list[tuple[str, str]]:
    """The metrics a task may rank by: the ordinal errors only for a task whose labels are an
    ordered scale, the metrics read from the items (``items``) only for a task of several outputs
    (every one, where that is not known yet)."""
    chosen = (*ranking_metrics(ordinal=ordinal), *(ITEM_METRICS if items else ()))
    return [(metric.key, metric.name) for metric in chosen]


class StoredFile(models.Model):
    """The bytes of an uploaded gold or prediction file, exactly as uploaded."""

    name = models.CharField(max_length=255, help_text="the uploaded file's base name, for display only")
    content = models.BinaryField()
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.name} ({self.size:,} bytes)"

    @classmethod
    def of(cls, *, name: str, content: bytes) -> StoredFile:
        return cls(name=name, content=content, size=len(content), sha256=hashlib.sha256(content).hexdigest())


class Counting(models.TextChoices):
    LATEST = "latest", "the latest scored submission"
    BEST = "best", "the best scored submission under the primary metric"
    CHOSEN = "chosen", "the submission the team chose, its primary run (else the latest)"


class Visibility(models.TextChoices):
    PUBLIC = "public", "public while the phase runs"
    AFTER_CLOSE = "after_close", "hidden until the phase closes"


class FinalPart(models.TextChoices):
    PRIVATE = "private", "the private part"
    ALL = "all", "every item (public and private)"


class Feedback(models.TextChoices):
    FULL = "full", "full: every score of its own submissions"
    PRIMARY = "primary", "the primary score only, rounded"
    VALIDATED = "validated", "validated only: the file was valid and has been scored"


class Registration(models.TextChoices):
    OPEN = "open", "open: whoever accepts the terms takes part"
    APPROVAL = "approval", "on approval: the organisers approve each participant"


class Task(models.Model):
    """A shared task: its labels and primary metric, its organisers, its terms and how people
    register, and its phases.

    A task may hold **subtasks** (SemEval-2017 Task 4 had five): each is a task of its own
    (``parent`` set) with its labels, primary metric, phases and boards, while registration,
    terms, organisers, teams and announcements are the parent's, its :attr:`root`. A task with
    subtasks holds no phases itself; a task without any is its own single subtask."""

    Registration = Registration

    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="subtasks",
        help_text="the task this one is a subtask of: its registration, terms, organisers, teams and announcements "
        "are the parent's",
    )
    slug = models.SlugField(unique=True, max_length=60)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    labels = models.JSONField(help_text="the ordered label set (a task of several outputs: none, its outputs have)")
    outputs = models.JSONField(
        default=list,
        blank=True,
        help_text="a task with several labels an item: its outputs, each {name, labels}, one column of its files each "
        "(an output of 0 and 1 is a label of a multi-label task); empty for a task of one label column",
    )
    ordinal = models.BooleanField(
        default=False,
        help_text="the labels, in their order, are an ordered scale (e.g. -2, -1, 0, 1, 2): the mean absolute errors "
        "of SemEval-2017 Task 4C are scored and ranked too (lower is better)",
    )
    primary_metric = models.CharField(max_length=60, choices=metric_choices, default="macro_f1")
    overall_method = models.CharField(
        "overall ranking",
        max_length=20,
        blank=True,
        choices=[("", "none"), *((method.key, method.name) for method in METHODS.values())],
        help_text="a column of the boards that ranks the teams across several metrics: their mean rank (lower is "
        "better) or Borda count (higher is better); visitors may pick another to explore",
    )
    overall_columns = models.CharField(
        "overall ranking over",
        max_length=1000,
        blank=True,
        default="table8",
        help_text=f"the columns it combines: {', '.join(BOARD_SETS[:-1])} or {BOARD_SETS[-1]} (table8: the metrics "
        "of Table 8 of Opitz 2024; the default), or column ids separated by commas, e.g. macro_f1, kappa, accuracy",
    )
    organisers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="organised_tasks")
    registration = models.CharField(max_length=10, choices=Registration.choices, default=Registration.OPEN)
    terms = models.TextField(
        blank=True,
        help_text="the data licence and the rules (e.g. one system description per team), shown at registration "
        "and accepted by every participant; a change asks everyone to accept again",
    )
    terms_version = models.PositiveIntegerField(default=0, help_text="increases whenever the terms change")
    results_version = models.PositiveBigIntegerField(
        default=0,
        editable=False,
        help_text="increases, in the same transaction, with every write that changes what a results page of the "
        "task shows: the key its cached pages are stored under (leaderboard.results_cache)",
    )
    scores_version = models.PositiveBigIntegerField(
        default=0,
        editable=False,
        help_text="increases, in the same transaction, with every new score or new intervals of the task: part of "
        "the key its cached pages are stored under (leaderboard.results_cache)",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "title"]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs) -> None:
        """A change of the stored terms raises their version, whatever route saves the task (its
        settings page, the admin): compared with the row in the database, because a model form
        has already copied the new text onto this instance when it validated."""
        if self.pk is not None:
            stored = Task.objects.filter(pk=self.pk).values("terms", "terms_version").first()
            if stored is not None and stored["terms"].strip() != self.terms.strip():
                self.terms_version = stored["terms_version"] + 1
                if kwargs.get("update_fields") is not None:
                    kwargs["update_fields"] = {*kwargs["update_fields"], "terms_version"}
        elif self.terms.strip() and not self.terms_version:
            self.terms_version = 1
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("leaderboard:task_detail", args=[self.slug])

    @property
    def root(self) -> Task:
        """The task people register for and form teams in: the parent of a subtask, else itself."""
        return self.parent if self.parent_id else self

    @property
    def community(self) -> Community:
        """Its people, the same for a task and each of its subtasks (:class:`Community`)."""
        return Community(self.root)

    def clean(self) -> None:
        if self.is_divided:  # its subtasks have the labels, metrics and overall rankings
            return
        scheme, metric = self.scheme, self.get_primary_metric_display()
        if self.primary_metric not in {column.key for column in scheme.ranking_columns() if column.label is None}:
            item = next((m for m in ITEM_METRICS if m.key == self.primary_metric), None)
            if item is None:
                raise errors.PRIMARY_NEEDS_ORDINAL.error("primary_metric", metric=metric)
            labels = ", every one a 0/1 label" if item.scope == "labels" else ""
            raise errors.PRIMARY_NEEDS_OUTPUTS.error("primary_metric", metric=metric, labels=labels)
        if self.overall_method:
            try:
                self.overall  # noqa: B018 (building it refuses a method or a column that names nothing)
            except ValueError as error:
                raise errors.BAD_OVERALL.error("overall_columns", why=error) from None

    @property
    def overall(self):
        """The overall ranking the organisers chose for the boards
        (:class:`~scoring.engine.aggregate.Aggregate`), or ``None``."""
        if not self.overall_method:
            return None
        return self.scheme.overall(
            self.overall_method, self.overall_columns or self.scheme.default_overall_set, primary=self.primary_metric
        )

    @property
    def scheme(self) -> Scheme:
        """What the task scores (one label column, or several outputs) and so its columns."""
        return Scheme(
            labels=tuple(self.labels or ()),
            ordinal=self.ordinal,
            outputs=tuple(Output.of(o) for o in self.outputs or ()),
        )

    @property
    def is_subtask(self) -> bool:
        return self.parent_id is not None

    @property
    def full_title(self) -> str:
        """The title, after its parent's for a subtask: what names it outside its pages."""
        return f"{self.parent.title}: {self.title}" if self.parent_id else self.title

    @property
    def is_divided(self) -> bool:
        """Divided into subtasks: it has no labels or outputs (nor phases) of its own."""
        return not self.is_subtask and not self.labels and not self.outputs

    def family_ids(self) -> list[int]:
        """This task's id and its subtasks' (a subtask has none)."""
        return [self.pk, *self.subtasks.values_list("pk", flat=True)]

    def ordered_phases(self) -> list[Phase]:
        """The phases in time order (prefetched ``phases`` are used as they are)."""
        return sorted(self.phases.all(), key=lambda phase: phase.opens_at)

    def current_phase(self, now=None) -> Phase | None:
        """The phase open now; else the latest that has opened; else the first to come."""
        now = now or timezone.now()
        phases = self.ordered_phases()
        opened = [phase for phase in phases if phase.opens_at <= now]
        return opened[-1] if opened else (phases[0] if phases else None)

    def open_phase(self, now=None) -> Phase | None:
        """The phase that takes uploads now, if any (phases never overlap)."""
        now = now or timezone.now()
        return next((phase for phase in self.ordered_phases() if phase.is_open(now)), None)

    def is_over(self, now=None) -> bool:
        """Every phase (of every subtask) has closed: teams can no longer be formed, joined or
        renamed."""
        now = now or timezone.now()
        phases = self.root.every_phase()
        return bool(phases) and all(phase.is_closed(now) for phase in phases)

    def every_phase(self) -> list[Phase]:
        """The phases of this task and of its subtasks, in time order."""
        phases = Phase.objects.filter(task_id__in=self.family_ids()).select_related("task")
        return sorted(phases, key=lambda phase: phase.opens_at)

    def is_organiser(self, user) -> bool:
        """Organisers of a subtask are its parent's."""
        if not user.is_authenticated:
            return False
        return user.is_staff or self.community.organisers.filter(pk=user.pk).exists()

    @property
    def submissions(self) -> SubmissionQuerySet:
        """The submissions of every phase of the task, and of its subtasks'."""
        return Submission.objects.filter(Q(phase__task=self) | Q(phase__task__parent=self))

    @property
    def needs_registration(self) -> bool:
        """People take part only once registered: the task (the parent of a subtask) has terms
        to accept, or organisers approve each participant. Otherwise anyone signed in may form a
        team and upload."""
        return self.community.needs_registration


@dataclass(frozen=True)
class Community:
    """The people of a task: its organisers, how people register and the terms they accept,
    their registrations, teams and memberships, the organisers' decisions about teams, and the
    announcements. A task divided into subtasks has one community, its own, and every subtask
    reaches it here (``subtask.community == parent.community``): no model of the community has
    a relation back from :class:`Task` (``task.teams`` does not exist), and code outside this
    class names a community's task only as ``<task>.community.task``
    (``tests/test_architecture.py`` checks both)."""

    task: Task
    """The task that holds the community: the parent of a subtask, else the task itself."""

    @property
    def organisers(self):
        return self.task.organisers

    @property
    def registration(self) -> str:
        return self.task.registration

    @property
    def terms(self) -> str:
        return self.task.terms

    @property
    def terms_version(self) -> int:
        return self.task.terms_version

    @property
    def needs_registration(self) -> bool:
        return self.registration == Registration.APPROVAL or bool(self.terms.strip())

    @property
    def teams(self) -> models.QuerySet[Team]:
        return Team.objects.filter(task=self.task)

    @property
    def memberships(self) -> models.QuerySet[Membership]:
        return Membership.objects.filter(task=self.task)

    @property
    def participants(self) -> models.QuerySet[Participant]:
        return Participant.objects.filter(task=self.task)

    @property
    def terms_acceptances(self) -> models.QuerySet[TermsAcceptance]:
        return TermsAcceptance.objects.filter(task=self.task)

    @property
    def announcements(self) -> models.QuerySet[Announcement]:
        return Announcement.objects.filter(task=self.task)

    @property
    def organiser_actions(self) -> models.QuerySet[OrganiserAction]:
        return OrganiserAction.objects.filter(task=self.task)

    @staticmethod
    def team_count() -> Coalesce:
        """How many teams each task of a query of tasks without a parent has, as an annotation."""
        teams = Team.objects.filter(task=OuterRef("pk")).order_by().values("task").annotate(n=Count("pk")).values("n")
        return Coalesce(Subquery(teams), 0)


class Phase(models.Model):
    """One phase of a task (practice, development, evaluation...): its own gold file, dates,
    limits, counting rule, leaderboard visibility and feedback policy. Teams belong to the task
    and persist across its phases; submissions and baselines belong to a phase.

    A phase may be set up before its gold file exists (a test set whose labels are not final, a
    bundle that did not carry them): until it is given it :attr:`waits_for_gold`, takes no upload
    and shows no board."""

    Counting = Counting
    Visibility = Visibility
    Feedback = Feedback
    FinalPart = FinalPart

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="phases")
    slug = models.SlugField(max_length=40)
    name = models.CharField(max_length=80)
    description = models.TextField(blank=True, help_text="what this phase is for, shown on the task page")
    gold_file = models.ForeignKey(
        StoredFile,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="empty: the phase waits for its gold file (no upload, no board) until its organisers give it",
    )
    gold_version = models.PositiveIntegerField(
        default=1, help_text="increases when the gold file is replaced; 0 while the phase waits for its first"
    )
    pending_gold_file = models.ForeignKey(
        StoredFile,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="a new gold file uploaded and previewed, waiting for the organiser's confirmation",
    )
    opens_at = models.DateTimeField()
    closes_at = models.DateTimeField()
    max_per_day = models.PositiveIntegerField(default=DEFAULT_MAX_PER_DAY, help_text="submissions per team per UTC day")
    max_total = models.PositiveIntegerField(default=DEFAULT_MAX_TOTAL, help_text="submissions per team in all")
    counting = models.CharField(max_length=10, choices=Counting.choices, default=Counting.LATEST)
    visibility = models.CharField(max_length=12, choices=Visibility.choices, default=Visibility.PUBLIC)
    feedback = models.CharField(
        max_length=10,
        choices=Feedback.choices,
        default=Feedback.FULL,
        help_text="what a team sees of its own submissions while results are hidden; once they are public, "
        "everything. Confusion matrices and per-class counts are never shown while results are hidden.",
    )
    private_percent = models.PositiveSmallIntegerField(
        default=0,
        validators=[MaxValueValidator(MAX_PRIVATE_PERCENT)],
        help_text="the share of the gold items kept private, in percent: while the phase runs, scores and the "
        "board use the public part only; 0 for no split. Fixed once the phase has opened.",
    )
    split_seed = models.CharField(
        max_length=40,
        default="0",
        help_text="the seed that drew the private items: 128 random bits, in decimal digits",
    )
    final_part = models.CharField(
        max_length=8,
        choices=FinalPart.choices,
        default=FinalPart.PRIVATE,
        help_text="with a split: what the final ranking, after the close, is computed on",
    )
    contrastive_runs = models.PositiveSmallIntegerField(
        default=0,
        validators=[MaxValueValidator(MAX_CONTRASTIVE_RUNS)],
        help_text="how many contrastive runs a team may mark besides its primary run (SemEval's practice): "
        "listed under the team on the board, never ranked; 0 for none. The primary run is the one that counts.",
    )
    hardest_published = models.BooleanField(
        default=False,
        help_text="the organisers published the analysis's hardest items (with their gold labels) to everyone who "
        "sees the board: possible, and shown, only while no phase that uses the same gold file is still to close",
    )

    class Meta:
        ordering = ["task", "opens_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(closes_at__gt=models.F("opens_at")),
                name="phase_closes_after_opening",
                violation_error_code=errors.BAD_DATES.code,
                violation_error_message=errors.BAD_DATES,
            ),
            models.UniqueConstraint(fields=["task", "slug"], name="phase_slug_unique_in_task"),
        ]

    def __str__(self) -> str:
        return f"{self.task} — {self.name}"

    def get_absolute_url(self) -> str:
        return reverse("leaderboard:leaderboard", args=[self.task.slug, self.slug])

    @property
    def labels(self) -> list[str]:
        return self.task.labels

    @property
    def primary_metric(self) -> str:
        return self.task.primary_metric

    @property
    def waits_for_gold(self) -> bool:
        """No gold file yet: no upload, no board, no sample submission until one is given."""
        return self.gold_file_id is None

    def is_open(self, now=None) -> bool:
        now = now or timezone.now()
        return self.opens_at <= now < self.closes_at

    def has_opened(self, now=None) -> bool:
        return (now or timezone.now()) >= self.opens_at

    def is_closed(self, now=None) -> bool:
        return (now or timezone.now()) >= self.closes_at

    def results_public(self, now=None) -> bool:
        return self.visibility == Visibility.PUBLIC or self.is_closed(now)

    @staticmethod
    def default_feedback(visibility: str) -> str:
        """Full feedback for a public board; "validated only" (the practice of SemEval's
        evaluation phases) when results are hidden until the close."""
        return Feedback.FULL if visibility == Visibility.PUBLIC else Feedback.VALIDATED

    def is_organiser(self, user) -> bool:
        return self.task.is_organiser(user)

    @property
    def has_split(self) -> bool:
        return self.private_percent > 0

    def run_marks(self) -> list[tuple[str, str]]:
        """The marks a run may have here (none without contrastive runs), as form choices."""
        if not self.contrastive_runs:
            return []
        runs = [(f"{CONTRASTIVE_MARK}{k}", f"contrastive run {k}") for k in range(1, self.contrastive_runs + 1)]
        return [(PRIMARY, "primary run (it counts)"), *runs, (UNMARKED, "not marked")]

    def clean(self) -> None:
        """A phase with contrastive runs counts each team's primary run: its chosen submission."""
        if self.contrastive_runs and self.counting != Counting.CHOSEN:
            raise errors.CONTRASTIVE_NEEDS_CHOSEN.error("counting", runs=self.contrastive_runs)

    @property
    def public_percent(self) -> int:
        return 100 - self.private_percent

    @property
    def split_seed_number(self) -> int:
        return int(self.split_seed)

    def shown_part(self, now=None) -> str:
        """The items the phase's scores and board are computed on: every item without a split;
        with one, the public part while the phase runs, then :attr:`final_part`."""
        if not self.has_split:
            return ALL_ITEMS
        return self.final_part if self.is_closed(now) else PUBLIC_PART


class PhaseFile(models.Model):
    """A file organisers attach to a phase for participants: the inputs without labels, trial
    data, a README or a licence. Anyone who may see the task may download it; the gold file is
    never one of these."""

    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="data_files")
    file = models.ForeignKey(StoredFile, on_delete=models.PROTECT, related_name="+")
    title = models.CharField(max_length=120, help_text='what the file is, e.g. "test inputs (no labels)"')
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["phase", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.title} ({self.file.name})"


def new_invite_code() -> str:
    return secrets.token_urlsafe(9)


class Team(models.Model):
    """A team in one task. A person belongs to at most one team per task (Membership)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=80)
    name_key = models.CharField(max_length=80, editable=False, help_text="the name as compared for uniqueness")
    lookalike_key = models.CharField(
        max_length=240, editable=False, help_text="the name's confusable skeleton, also unique in the task"
    )
    invite_code = models.CharField(max_length=24, unique=True, default=new_invite_code)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="teams")
    system_name = models.CharField(max_length=120, blank=True, help_text="the name of the team's system")
    system_description = models.TextField(blank=True, help_text="what the system does, in a few sentences")
    paper_url = models.URLField(
        blank=True,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="the team's system description paper, once there is one (http or https)",
    )
    removed_at = models.DateTimeField(null=True, blank=True)
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    removed_reason = models.TextField(blank=True, help_text="shown on the leaderboard")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["task", "name_key"], name="team_name_key_unique_in_task"),
            models.UniqueConstraint(fields=["task", "lookalike_key"], name="team_lookalike_unique_in_task"),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        self.name_key, self.lookalike_key = name_key(self.name), lookalike_key(self.name)
        if "update_fields" in kwargs and kwargs["update_fields"] is not None and "name" in kwargs["update_fields"]:
            kwargs["update_fields"] = {*kwargs["update_fields"], "name_key", "lookalike_key"}
        super().save(*args, **kwargs)


class Membership(models.Model):
    """A person in a team; ``task`` is repeated so the database enforces one team per task."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    team = models.ForeignKey(Team, on_delete=models.CASCADE)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    joined_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "task"], name="one_team_per_task")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team}"


def stored_scores(report: Report | OutputsReport) -> dict:
    """A report's scores as the JSON columns of :class:`Scored` hold them; a run of several
    outputs keeps each output's under ``output_scores`` (its own matrix and suite), no matrix of
    its own."""
    if isinstance(report, OutputsReport):
        return {
            "confusion_matrix": None,
            "metrics": report.metrics,
            "calibrated": report.calibrated,
            "per_class": None,
            "calibrated_per_class": None,
            "output_scores": {name: stored_scores(single) for name, single in report.reports.items()},
        }
    return {
        "confusion_matrix": report.as_json()["confusion_matrix"],
        "metrics": report.metrics,
        "calibrated": report.calibrated,
        "per_class": report.per_class,
        "calibrated_per_class": report.calibrated_per_class,
    }


def scheme_of(report: Report | OutputsReport) -> Scheme:
    """The kind of task a report is of."""
    if isinstance(report, OutputsReport):
        return Scheme(outputs=report.outputs)
    return Scheme(labels=tuple(report.labels), ordinal=report.ordinal)


@dataclass(frozen=True)
class PartScores:
    """The scores of one part of a split test set, read like a scored row (a board column
    reads them; :class:`scoring.engine.columns.Scores`)."""

    confusion_matrix: list | None
    metrics: dict | None
    calibrated: dict | None
    per_class: dict | None
    calibrated_per_class: dict | None
    output_scores: dict | None = None

    def calibrated_matrix(self) -> list[list[float]] | None:
        return calibrated_of(self.confusion_matrix)


def calibrated_of(matrix) -> list[list[float]] | None:
    """The prevalence-calibrated matrix (paper 000, Eq. 6); None if unscored or undefined."""
    if matrix is None:
        return None
    calibrated = calibrate(np.asarray(matrix, dtype=np.float64))
    return None if calibrated is None else calibrated.tolist()


class Scored(models.Model):
    """A confusion matrix and the metric suite computed from it (raw and calibrated), on every
    item; with a split test set, the same for each part (``parts``)."""

    confusion_matrix = models.JSONField(null=True, blank=True, help_text="rows predicted, columns gold")
    metrics = models.JSONField(null=True, blank=True)
    calibrated = models.JSONField(null=True, blank=True)
    per_class = models.JSONField(null=True, blank=True)
    calibrated_per_class = models.JSONField(null=True, blank=True)
    output_scores = models.JSONField(
        null=True,
        blank=True,
        help_text="a task with several outputs: {output: its confusion matrix and suite}; the fields above then hold "
        "each metric's mean over the outputs and the metrics read from the items, and no matrix",
    )
    parts = models.JSONField(
        null=True,
        blank=True,
        help_text="with a split test set: {part: scores of that part's items}, for the public and private parts",
    )
    board_values = models.BinaryField(
        null=True,
        blank=True,
        editable=False,
        help_text="the values of every ranking column (raw, then calibrated), as little-endian doubles, NaN where "
        "undefined: on every item, then (with a split) on the public and the private part; what a board reads",
    )
    board_layout = models.CharField(
        max_length=16, blank=True, editable=False, help_text="which columns, in which order, board_values holds"
    )

    class Meta:
        abstract = True

    PACKED_PARTS = (ALL_ITEMS, PUBLIC_PART, PRIVATE_PART)
    """The parts whose values ``board_values`` holds, in this order (the first only without a split)."""

    def apply(self, report: Report | OutputsReport, *, parts: dict | None = None) -> None:
        """Take the scores of ``report`` and of each part's report (not saved: the caller saves
        with its status), as JSON and as the board's packed values."""
        self.output_scores = None
        for name, value in stored_scores(report).items():
            setattr(self, name, value)
        self.parts = {part: stored_scores(scores) for part, scores in parts.items()} if parts else None
        self.pack(scheme_of(report))

    def pack(self, scheme: Scheme) -> None:
        """Pack the stored scores for the board (:func:`packed_rows`)."""
        self.board_values, self.board_layout = packed_rows(self, scheme)

    def clear_scores(self) -> None:
        """Forget the scores (not saved), e.g. when scoring against a new gold file failed."""
        self.confusion_matrix = self.metrics = self.calibrated = None
        self.per_class = self.calibrated_per_class = self.parts = self.output_scores = None
        self.board_values, self.board_layout = None, ""

    @staticmethod
    def layout_of(columns) -> str:
        """A short name of a list of columns and their order (each packed row holds their values,
        then the confusion matrix of the columns' classes, row by row)."""
        return hashlib.sha256("\n".join(["matrix", *(column.id for column in columns)]).encode()).hexdigest()[:16]

    @staticmethod
    def row_of(columns, scores, n_classes: int) -> np.ndarray:
        """The values of ``columns`` in ``scores`` (NaN where undefined, or no scores), then the
        cells of its ``n_classes`` × ``n_classes`` confusion matrix, row by row (NaN without one)."""
        n = n_classes
        values = [np.nan if (v := column.value(scores)) is None else v for column in columns]
        matrix = getattr(scores, "confusion_matrix", None) if scores is not None else None
        cells = np.full(n * n, np.nan) if matrix is None else np.asarray(matrix, dtype=np.float64).ravel()
        return np.concatenate([np.array(values, dtype=np.float64), cells])

    @classmethod
    def unpacked(cls, values: bytes | None, stored_layout: str, *, layout: str, part: str, width: int):
        """The packed row of ``part`` in ``values`` if they are of ``layout`` (else ``None``:
        read the JSON)."""
        if stored_layout != layout or values is None:
            return None
        packed = np.frombuffer(bytes(values), dtype="<f8").reshape(-1, width)
        index = cls.PACKED_PARTS.index(part)
        return packed[index] if index < len(packed) else None

    def calibrated_matrix(self) -> list[list[float]] | None:
        """The prevalence-calibrated matrix (paper 000, Eq. 6); None if unscored or undefined."""
        return calibrated_of(self.confusion_matrix)

    def part(self, name: str) -> Scored | PartScores | None:
        """The scores on part ``name`` (``"all"``: this row's own); ``None`` when the part was
        not scored (a row scored before its phase had a split)."""
        if name == ALL_ITEMS:
            return self
        stored = (self.parts or {}).get(name)
        return None if stored is None else PartScores(**stored)


def packed_scores(scored, labels: Sequence[str], *, ordinal: bool = False) -> tuple[bytes, str]:
    """:func:`packed_rows` of a task of one label column (what migration 0019 packed)."""
    return packed_rows(scored, Scheme(labels=tuple(labels), ordinal=ordinal))


def packed_rows(scored, scheme: Scheme) -> tuple[bytes, str]:
    """What a board reads of a scored row (its fields only: a migration's historical model
    will do): for every item, then (with a split) for the public and the private part, the
    values of every ranking column of the task's ``scheme`` and the confusion matrix's cells, as
    little-endian doubles; and the name of that layout."""
    columns = scheme.ranking_columns(calibrated=None)
    if scored.parts:
        shown = [scored, *(PartScores(**scored.parts[part]) for part in Scored.PACKED_PARTS[1:])]
    else:
        shown = [scored]
    rows = [Scored.row_of(columns, scores, scheme.matrix_size) for scores in shown]
    return np.stack(rows).astype("<f8").tobytes(), Scored.layout_of(columns)


class SubmissionQuerySet(models.QuerySet):
    def scored(self) -> SubmissionQuerySet:
        return self.filter(status=Submission.Status.SCORED)

    def shown(self) -> SubmissionQuerySet:
        """Scored, not disqualified, of a team not removed: what a board may show."""
        return self.scored().filter(disqualified_at__isnull=True, team__removed_at__isnull=True)

    def rankable(self) -> SubmissionQuerySet:
        """What a board may rank: shown, and not a contrastive run."""
        return self.shown().filter(contrastive__isnull=True)

    def counted_against_limits(self) -> SubmissionQuerySet:
        """Every stored submission counts, except those that failed scoring for our fault."""
        return self.exclude(status=Submission.Status.FAILED)

    def unfinished(self) -> SubmissionQuerySet:
        return self.filter(status__in=[Submission.Status.QUEUED, Submission.Status.SCORING])

    def needing_scoring(self, *, stuck_after: dt.timedelta) -> SubmissionQuerySet:
        """Queued; in scoring for longer than ``stuck_after`` since its scoring started (a lost
        job, a killed worker); or scored against an older gold file. Not in a phase that waits
        for its gold file: giving it queues them."""
        cutoff = timezone.now() - stuck_after
        stuck = Q(scoring_started_at__isnull=True) | Q(scoring_started_at__lte=cutoff)
        return self.exclude(phase__gold_file__isnull=True).filter(
            Q(status=Submission.Status.QUEUED)
            | (Q(status=Submission.Status.SCORING) & stuck)
            | (Q(status=Submission.Status.SCORED) & ~Q(scored_gold_version=F("phase__gold_version")))
        )


class Submission(Scored):
    """One uploaded prediction file of a team and, once scored, its scores."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        SCORING = "scoring", "scoring"
        SCORED = "scored", "scored"
        FAILED = "failed", "failed"

    class Kind(models.TextChoices):
        HARD = "hard", "labels"
        SOFT = "soft", "probabilities"

    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="submissions")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="submissions")
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    file = models.ForeignKey(StoredFile, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=4, choices=Kind.choices)
    description = models.CharField(max_length=DESCRIPTION_MAX_LENGTH, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED, db_index=True)
    failure = models.TextField(blank=True, help_text="why scoring failed")
    created_at = models.DateTimeField(default=timezone.now, db_index=True, help_text="upload time")
    enqueued_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when the submission was last handed to the queue (empty: never, or the queue "
        "could not be reached); the recovery sweep hands it again when its job is lost",
    )
    job_id = models.CharField(max_length=64, blank=True, help_text="the queue's id of its latest scoring job")
    scoring_started_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when the latest scoring of it started: a run in scoring is taken for lost "
        "SCORING_STUCK_AFTER_S after this, not after its upload",
    )
    scored_at = models.DateTimeField(null=True, blank=True)
    scored_gold_version = models.PositiveIntegerField(null=True, blank=True)
    score_count = models.PositiveIntegerField(default=0, help_text="how many times scores were written")
    disqualified_at = models.DateTimeField(null=True, blank=True)
    disqualified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    disqualified_reason = models.TextField(blank=True, help_text="shown on the leaderboard")
    chosen = models.BooleanField(
        default=False, help_text="the team chose it to count in its phase (its primary run, where runs are marked)"
    )
    contrastive = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="marked by its team as contrastive run 1, 2, ... of its phase: listed under the team, never ranked",
    )
    items = models.BinaryField(
        null=True,
        blank=True,
        editable=False,
        help_text="per-item predictions in the gold file's order at the scored gold version (class codes or "
        "probability rows, compressed: scoring.engine.items), written with the scores; what a paired bootstrap "
        "resamples. Empty for submissions scored before they were kept.",
    )

    objects = SubmissionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["team", "created_at"]),
            # A team's runs in a phase (its limits, at every upload): the database reads them, not
            # every run of the phase, which it would otherwise read by the phase's index.
            models.Index(fields=["team", "phase", "created_at"], name="submission_team_phase"),
            # Which run counts for each team (selectors/boards.counting_rows), read from the index
            # alone, in its order: not from the rows, whose scores are kilobytes each (10,000
            # teams on SQLite: 42 ms, against 17 ms).
            models.Index(
                fields=[
                    "phase",
                    "status",
                    "team",
                    "-created_at",
                    "-id",
                    "disqualified_at",
                    "contrastive",
                    "score_count",
                    "scored_gold_version",
                ],
                name="submission_counting",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "phase"], condition=Q(chosen=True), name="one_chosen_submission_per_phase"
            ),
            models.UniqueConstraint(
                fields=["team", "phase", "contrastive"],
                condition=Q(contrastive__isnull=False),
                name="one_submission_per_contrastive_mark",
            ),
            models.CheckConstraint(
                condition=Q(contrastive__isnull=True) | Q(chosen=False), name="a_contrastive_run_is_not_primary"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} of {self.team} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("leaderboard:submission_detail", args=[self.task.slug, self.pk])

    @property
    def task(self) -> Task:
        """Its phase's task (derived: a submission cannot name another task than its phase's)."""
        return self.phase.task

    @property
    def run_mark(self) -> str:
        """:data:`PRIMARY` (its team's chosen submission), contrastive k, or :data:`UNMARKED`."""
        if self.contrastive:
            return f"{CONTRASTIVE_MARK}{self.contrastive}"
        return PRIMARY if self.chosen else UNMARKED

    def is_scored_against(self, gold_version: int) -> bool:
        """Scored, and against this version of the gold file."""
        return self.status == self.Status.SCORED and self.scored_gold_version == gold_version

    @property
    def is_being_rescored(self) -> bool:
        """Scored against an older gold file: its scores stand until the new ones land."""
        return self.status == self.Status.SCORED and self.scored_gold_version != self.phase.gold_version

    def apply(
        self, report: Report | OutputsReport, *, items: np.ndarray | None = None, parts: dict | None = None
    ) -> None:
        """Take the scores of ``report`` (and of each part's, with a split test set) and the
        per-item predictions they come from (not saved)."""
        super().apply(report, parts=parts)
        if isinstance(report, OutputsReport):
            n_classes = max(len(output.labels) for output in report.outputs)
        else:
            n_classes = len(report.labels)
        self.items = None if items is None else pack_items(items, n_classes)

    def clear_scores(self) -> None:
        super().clear_scores()
        self.items = None

    def shown_scores(self) -> Scored | PartScores | None:
        """The scores its phase shows now: on every item, or on the part of a split test set
        that the phase's board is computed on (:meth:`Phase.shown_part`)."""
        return self.part(self.phase.shown_part())

    def item_predictions(self) -> np.ndarray | None:
        """The stored per-item predictions (codes or probability rows), if any."""
        return None if self.items is None else unpack_items(self.items)


class Baseline(Scored):
    """A reference row shown on the leaderboard but never ranked (majority class, random...)."""

    class Kind(models.TextChoices):
        MAJORITY = "majority", "always the most frequent gold class"
        UNIFORM = "uniform", "uniformly random labels (expected matrix)"
        PREVALENCE = "prevalence", "random labels drawn with the gold prevalence (expected matrix)"

    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="baselines")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    name = models.CharField(max_length=80)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["phase", "kind"], name="one_baseline_per_kind_in_phase")]

    def __str__(self) -> str:
        return self.name


class NotificationQuerySet(models.QuerySet):
    def unread(self) -> NotificationQuerySet:
        return self.filter(read_at__isnull=True)


class Notification(models.Model):
    """A note on the site for one person: a submission of their team was scored or failed.

    The same text goes by e-mail when the person has an address. It never holds a score: what a
    team may see of its scores depends on the task's feedback policy, which the submission's
    page applies, so the note only says what happened and where to look.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="notifications"
    )
    message = models.TextField()
    link = models.CharField(max_length=300, blank=True, help_text="the path of the page the note is about")
    created_at = models.DateTimeField(default=timezone.now)
    read_at = models.DateTimeField(null=True, blank=True)

    objects = NotificationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "read_at"], name="notification_user_read")]

    def __str__(self) -> str:
        return f"to {self.user}: {self.message[:60]}"


class ConfirmedEmail(models.Model):
    """An e-mail address its account's owner has confirmed by following a signed link.

    Confirmation belongs to the address, not the account: after a change of address the new
    one is unconfirmed until its own link is followed (``settings.EMAIL_VERIFICATION``).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="confirmed_emails")
    email = models.EmailField()
    confirmed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint("user", Lower("email"), name="confirmed_email_unique_per_user")]

    def __str__(self) -> str:
        return f"{self.email} of {self.user}"


class ApiTokenQuerySet(models.QuerySet):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    """A person's token for the JSON API (``Authorization: Bearer <secret>``).

    Only the SHA-256 of the secret is stored: the secret is shown once, when the token is
    created, and cannot be read back from the database. ``prefix`` (the secret's first
    characters) lets its owner tell tokens apart on the tokens page. A revoked token stays
    listed, with its date, and is refused from then on.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=80, help_text="what the token is for, e.g. the machine it lives on")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the secret, hexadecimal")
    prefix = models.CharField(max_length=12, help_text="the secret's first characters, to recognise it")
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    SECRET_PREFIX = "lbt_"
    """Marks our secrets, so that a secret scanner (or a person) can recognise one."""

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user}"

    @staticmethod
    def hash_of(secret: str) -> str:
        return hashlib.sha256(secret.encode()).hexdigest()

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class OrganiserAction(models.Model):
    """A record of an organiser's decision about a team or a submission: who, when, why."""

    class Kind(models.TextChoices):
        DISQUALIFY = "disqualify", "disqualified a submission"
        REMOVE_TEAM = "remove_team", "removed a team"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    submission = models.ForeignKey(Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.actor} {self.get_kind_display()} ({self.created_at:%Y-%m-%d %H:%M})"


class Participant(models.Model):
    """A person's registration in a task: requested, then approved or refused (with a reason),
    and the version of the terms they last accepted."""

    class Status(models.TextChoices):
        PENDING = "pending", "waiting for approval"
        APPROVED = "approved", "approved"
        REFUSED = "refused", "refused"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="registrations")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    reason = models.TextField(blank=True, help_text="why the request was refused, shown to the person")
    terms_version = models.PositiveIntegerField(default=0, help_text="the version of the terms last accepted")
    requested_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    announcement_emails = models.BooleanField(default=True, help_text="e-mail me the task's announcements")

    class Meta:
        ordering = ["requested_at", "id"]
        constraints = [models.UniqueConstraint(fields=["task", "user"], name="one_registration_per_task")]

    def __str__(self) -> str:
        return f"{self.user} in {self.task} ({self.status})"


class TermsAcceptance(models.Model):
    """A record that a person accepted a version of a task's terms, and when."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    version = models.PositiveIntegerField()
    terms = models.TextField(help_text="the terms as they read when accepted")
    accepted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-accepted_at", "-id"]

    def __str__(self) -> str:
        return f"{self.user} accepted version {self.version} of the terms of {self.task}"


class Announcement(models.Model):
    """News from the organisers on the task page, newest first; optionally e-mailed to every
    approved participant who has not opted out (sent from the background queue)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    title = models.CharField(max_length=200)
    body = models.TextField(help_text="plain text: shown escaped, with line breaks kept")
    email = models.BooleanField(default=False, help_text="also e-mail it to the participants")
    emailed_at = models.DateTimeField(null=True, blank=True)
    recipients = models.PositiveIntegerField(default=0, help_text="how many e-mails were sent")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title


LOST_AFTER = dt.timedelta(minutes=10)
"""A derived result's computation asked for this long ago and not finished is taken for lost."""


class ComputationFailed(Exception):
    """A derived result's computation failed for a reason a page can show (the memory or time it
    was allowed): the previous result stays, marked stale with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class DerivedState:
    """Where a phase's derived result stands against the inputs it would be computed from now."""

    current: bool
    failure: str = ""
    """Why the computation for these inputs failed (the next change of the inputs asks again)."""
    due_at: dt.datetime | None = None
    """When the next computation will be asked for, while it waits for its kind's pause."""


class DerivedResult(models.Model):
    """The state every derived result of a phase keeps (one row per phase and kind; the
    mechanism is :mod:`leaderboard.derived`): the digest of the inputs its result was computed
    from, when, whether a computation is under way, and why the last one failed. The result of
    older inputs stays until a new one is written, so pages can show it marked as stale."""

    STATE = ("phase", "stamp", "computed_at", "requested_at", "failure", "failed_stamp", "failed_at")
    """The fields the state is decided from (a result, up to megabytes, is read apart)."""

    stamp = models.CharField(max_length=64, blank=True, help_text="digest of the inputs the result was computed from")
    computed_at = models.DateTimeField(null=True, blank=True)
    requested_at = models.DateTimeField(
        null=True, blank=True, help_text="when a computation was last handed over; cleared when it ends"
    )
    failure = models.CharField(
        max_length=200, blank=True, help_text="why the last computation failed; empty once one succeeds"
    )
    failed_stamp = models.CharField(
        max_length=64, blank=True, help_text="digest of the inputs the last failed computation was asked for"
    )
    failed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    def under_way(self, now: dt.datetime) -> bool:
        """Whether a computation was handed over less than :data:`LOST_AFTER` ago."""
        return self.requested_at is not None and self.requested_at > now - LOST_AFTER

    def due_at(self, pause_s: float) -> dt.datetime | None:
        """When the next computation may start: ``pause_s`` after the end of the last, whether it
        succeeded or failed (``None``: at once)."""
        ends = [at for at in (self.computed_at, self.failed_at) if at is not None]
        return max(ends) + dt.timedelta(seconds=pause_s) if ends and pause_s > 0 else None

    def state(self, stamp: str, *, pause_s: float, now: dt.datetime) -> DerivedState:
        """The state against ``stamp``, the digest of the inputs as they are now."""
        if self.stamp == stamp:
            return DerivedState(current=True)
        if self.failed_stamp == stamp:
            return DerivedState(current=False, failure=self.failure)
        due_at = None if self.under_way(now) else self.due_at(pause_s)
        return DerivedState(current=False, due_at=due_at if due_at is not None and due_at > now else None)


class PhaseStability(DerivedResult):
    """The paired-bootstrap intervals of a phase's board (computed by leaderboard.stability):
    the latest result and its state."""

    phase = models.OneToOneField(Phase, on_delete=models.CASCADE, related_name="stability")
    result = models.JSONField(null=True, blank=True, help_text="intervals in the layout of the CLI's board JSON")
    replicates = models.PositiveIntegerField(default=0)
    seed = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"intervals of {self.phase}"


class PhaseAnalysis(DerivedResult):
    """What the teams of a phase got wrong together (computed by leaderboard.analysis from the
    counting runs' per-item predictions): the latest result and its state."""

    phase = models.OneToOneField(Phase, on_delete=models.CASCADE, related_name="analysis")
    part = models.CharField(max_length=8, blank=True, help_text="the items it was computed on: all, public or private")
    result = models.JSONField(
        null=True,
        blank=True,
        help_text="the teams analysed and left out, the majority vote's and the oracle's scores, the items no team "
        "got right per gold label, kappa and its clustering, the hardest items (scoring.engine.analysis)",
    )
    board_values = models.BinaryField(
        null=True,
        blank=True,
        editable=False,
        help_text="the majority vote's and the oracle's values under every ranking column, packed as a scored row's "
        "(Scored.board_values): what a board reads",
    )
    board_layout = models.CharField(max_length=16, blank=True, editable=False)
    n_teams = models.PositiveIntegerField(default=0, help_text="the teams whose runs were analysed")
    hardest_labels = models.BinaryField(
        null=True,
        blank=True,
        editable=False,
        help_text="each analysed team's label of each hardest item (class codes, compressed: scoring.engine.items)",
    )

    def __str__(self) -> str:
        return f"analysis of {self.phase}"


class SentMail(models.Model):
    """An e-mail the site sent because someone asked (a password reset, an address to confirm,
    an announcement): what the per-recipient and per-address limits count
    (:func:`leaderboard.services.notifications.mail_allowed`)."""

    class Kind(models.TextChoices):
        ACCOUNT = "account", "a password reset or an address to confirm"
        ANNOUNCEMENT = "announcement", "an announcement of a task"

    recipient = models.CharField(max_length=254, help_text="the address, in lower case")
    requested_from = models.CharField(max_length=45, blank=True, help_text="the address of the client that asked")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["recipient", "kind", "created_at"], name="sent_mail_recipient"),
            models.Index(fields=["requested_from", "kind", "created_at"], name="sent_mail_requester"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} to {self.recipient}"


class TaskImport(models.Model):
    """A bundle uploaded to be imported as a new task (:mod:`leaderboard.services.imports`),
    waiting while its organiser reads the preview and answers its questions; deleted once the
    task is created, or when the same person uploads another bundle."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    file = models.ForeignKey(StoredFile, on_delete=models.PROTECT, related_name="+")
    options = models.JSONField(default=dict, blank=True, help_text="the organiser's answers so far")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"import of {self.file.name} by {self.user}"


class TaskImportGold(models.Model):
    """A gold file the organiser gave for a phase of a pending import whose bundle has none this
    site can read."""

    pending = models.ForeignKey(TaskImport, on_delete=models.CASCADE, related_name="golds")
    phase_index = models.PositiveSmallIntegerField()
    file = models.ForeignKey(StoredFile, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pending", "phase_index"], name="one_gold_per_pending_phase")]

    def __str__(self) -> str:
        return f"gold of phase {self.phase_index} of {self.pending}"


# --- stored files go with the rows that own them ---------------------------------------------------

FILE_OWNERS = (
    (Submission, "file"),
    (Phase, "gold_file"),
    (Phase, "pending_gold_file"),
    (PhaseFile, "file"),
    (TaskImport, "file"),
    (TaskImportGold, "file"),
)
"""Every foreign key to a stored file: a file none of them names any more is deleted."""


def delete_unowned_files(file_ids: set[int]) -> None:
    """Delete the stored files among ``file_ids`` that no row names any more."""
    owned = set()
    for model, field in FILE_OWNERS:
        owned.update(model.objects.filter(**{f"{field}__in": file_ids}).values_list(field, flat=True))
    StoredFile.objects.filter(pk__in=file_ids - owned).delete()


@receiver(post_delete, sender=Submission)
@receiver(post_delete, sender=Phase)
@receiver(post_delete, sender=PhaseFile)
@receiver(post_delete, sender=TaskImport)
@receiver(post_delete, sender=TaskImportGold)
def _delete_files_of(sender, instance, **kwargs) -> None:
    """A deleted submission, phase, data file or pending import takes its stored bytes along (whatever deleted
    it: a service, the admin, the cascade of a deleted task), unless another row still names
    them. Runs in the deleting transaction."""
    ids = {getattr(instance, f"{field}_id") for model, field in FILE_OWNERS if model is sender}
    delete_unowned_files(ids - {None})
