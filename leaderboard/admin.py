"""The Django admin for every model.

What the admin may not do, it shows read-only: file contents (they can be large), scores and
counters the scoring job writes, and a phase's gold file, which changes only through its
preview-and-confirm page (every submission is then re-scored: the admin links to that page).
A change saved here is a change like any other: it raises the task's results version
(:func:`leaderboard.results_cache.results_changed`), so results pages show it at once, and a
change of the terms raises their version (:meth:`Task.save`).
"""

from django.contrib import admin
from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html

from leaderboard.models import (
    Announcement,
    ApiToken,
    Baseline,
    ConfirmedEmail,
    Membership,
    Notification,
    OrganiserAction,
    Participant,
    Phase,
    PhaseAnalysis,
    PhaseFile,
    PhaseStability,
    SentMail,
    StoredFile,
    Submission,
    Task,
    TaskImport,
    TaskImportGold,
    Team,
    TermsAcceptance,
)
from leaderboard.results_cache import results_changed


def task_id_of(obj) -> int | None:
    """The task a row belongs to, for the rows results pages show."""
    if isinstance(obj, Task):
        return obj.pk
    if isinstance(obj, Phase | Team | OrganiserAction | Participant):
        return obj.task_id
    if isinstance(obj, Submission | Baseline | PhaseFile | PhaseStability | PhaseAnalysis):
        return obj.phase.task_id
    if isinstance(obj, Membership):
        return obj.task_id
    return None


class ResultsAdmin(admin.ModelAdmin):
    """Saving or deleting a row here raises its task's results version, in the same transaction."""

    def _changed(self, obj) -> None:
        task_id = task_id_of(obj)
        if task_id is not None:
            results_changed(task_id)

    @transaction.atomic
    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        self._changed(obj)

    @transaction.atomic
    def delete_model(self, request, obj):
        task_id = task_id_of(obj)
        super().delete_model(request, obj)
        if task_id is not None:
            results_changed(task_id)

    @transaction.atomic
    def delete_queryset(self, request, queryset):
        task_ids = {task_id_of(obj) for obj in queryset} - {None}
        super().delete_queryset(request, queryset)
        for task_id in task_ids:
            results_changed(task_id)

    @transaction.atomic
    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        self._changed(form.instance)


@admin.register(StoredFile)
class StoredFileAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "size", "sha256", "created_at"]
    search_fields = ["name", "sha256"]
    exclude = ["content"]
    readonly_fields = ["name", "size", "sha256", "created_at"]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    fields = ["user", "task", "joined_at"]


def gold_link(phase: Phase) -> str:
    if phase.pk is None:
        return "—"
    url = reverse("leaderboard:gold_replace", args=[phase.task.slug, phase.slug])
    if phase.waits_for_gold:
        return format_html('none yet: the phase waits for it (<a href="{}">give it: preview, then confirm</a>)', url)
    return format_html('{} (<a href="{}">replace: preview, then confirm</a>)', phase.gold_file, url)


class PhaseInline(admin.StackedInline):
    model = Phase
    extra = 0
    exclude = ["gold_file", "pending_gold_file"]
    readonly_fields = ["gold", "gold_version", "split_seed"]

    @admin.display(description="gold file")
    def gold(self, phase: Phase) -> str:
        return gold_link(phase)

    def has_add_permission(self, request, obj=None) -> bool:
        return False  # a new phase is checked against its task (dates, gold file): the task page's "Add a phase"


@admin.register(Task)
class TaskAdmin(ResultsAdmin):
    list_display = ["title", "slug", "primary_metric", "created_at"]
    search_fields = ["title", "slug"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["organisers"]
    readonly_fields = ["terms_version", "created_at"]
    inlines = [PhaseInline]

    def get_readonly_fields(self, request, obj=None):
        """A task divided into subtasks has no labels (its subtasks have theirs): not a field to
        fill. A subtask has no terms of its own (nor their version)."""
        if obj is not None and obj.is_subtask:
            return ["created_at"]
        divided = obj is not None and obj.is_divided
        return [*self.readonly_fields, *(["labels"] if divided else [])]

    def get_exclude(self, request, obj=None):
        """A subtask's organisers, registration and terms are its parent's: no fields that would
        change nothing."""
        return ["organisers", "registration", "terms", "terms_version"] if obj is not None and obj.is_subtask else None


@admin.register(Phase)
class PhaseAdmin(ResultsAdmin):
    list_display = ["name", "task", "opens_at", "closes_at", "counting", "visibility", "feedback"]
    list_filter = ["task", "visibility", "counting"]
    exclude = ["gold_file", "pending_gold_file"]
    readonly_fields = ["task", "gold", "gold_version", "split_seed"]

    @admin.display(description="gold file")
    def gold(self, phase: Phase) -> str:
        return gold_link(phase)

    def has_add_permission(self, request) -> bool:
        return False  # a new phase is checked against its task (dates, gold file): the task page's "Add a phase"


@admin.register(PhaseFile)
class PhaseFileAdmin(ResultsAdmin):
    list_display = ["title", "phase", "file", "created_at"]
    raw_id_fields = ["file"]


@admin.register(Team)
class TeamAdmin(ResultsAdmin):
    list_display = ["name", "task", "created_at", "removed_at"]
    list_filter = ["task"]
    search_fields = ["name"]
    readonly_fields = ["removed_at", "removed_by", "created_at"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(ResultsAdmin):
    list_display = ["user", "team", "task", "joined_at"]
    list_filter = ["task"]
    autocomplete_fields = ["user", "team"]


SCORES = ["confusion_matrix", "metrics", "calibrated", "per_class", "calibrated_per_class", "parts"]


@admin.register(Submission)
class SubmissionAdmin(ResultsAdmin):
    list_display = ["id", "phase", "team", "kind", "status", "chosen", "created_at", "scored_at", "score_count"]
    list_filter = ["phase__task", "phase", "status", "kind"]
    search_fields = ["team__name", "description"]
    raw_id_fields = ["file", "team", "submitted_by"]
    readonly_fields = [
        "phase",
        "kind",
        "status",
        "failure",
        "score_count",
        "scored_gold_version",
        "scored_at",
        "enqueued_at",
        "job_id",
        "scoring_started_at",
        "disqualified_at",
        "disqualified_by",
        *SCORES,
    ]


@admin.register(Baseline)
class BaselineAdmin(ResultsAdmin):
    list_display = ["name", "phase", "kind"]
    list_filter = ["phase", "kind"]
    readonly_fields = SCORES


@admin.register(PhaseStability)
class PhaseStabilityAdmin(ResultsAdmin):
    list_display = ["phase", "computed_at", "requested_at", "replicates", "seed"]
    exclude = ["result"]
    readonly_fields = ["phase", "stamp", "replicates", "seed", "computed_at", "requested_at"]


@admin.register(PhaseAnalysis)
class PhaseAnalysisAdmin(ResultsAdmin):
    """Its result holds gold labels (the hardest items): shown to staff only, as the admin is."""

    list_display = ["phase", "computed_at", "requested_at", "n_teams", "part"]
    exclude = ["result", "board_values", "hardest_labels"]
    readonly_fields = ["phase", "stamp", "part", "n_teams", "board_layout", "computed_at", "requested_at"]


@admin.register(OrganiserAction)
class OrganiserActionAdmin(ResultsAdmin):
    list_display = ["task", "kind", "actor", "team", "submission", "created_at"]
    list_filter = ["task", "kind"]
    raw_id_fields = ["actor", "team", "submission"]
    readonly_fields = ["created_at"]


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ["user", "task", "status", "terms_version", "requested_at", "decided_at"]
    list_filter = ["task", "status"]
    search_fields = ["user__username", "user__email"]
    raw_id_fields = ["user", "decided_by"]


@admin.register(TermsAcceptance)
class TermsAcceptanceAdmin(admin.ModelAdmin):
    list_display = ["user", "task", "version", "accepted_at"]
    list_filter = ["task"]
    readonly_fields = ["task", "user", "version", "terms", "accepted_at"]


@admin.register(Announcement)
class AnnouncementAdmin(admin.ModelAdmin):
    list_display = ["title", "task", "author", "email", "emailed_at", "recipients", "created_at"]
    list_filter = ["task"]
    readonly_fields = ["emailed_at", "recipients"]
    raw_id_fields = ["author"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens can be looked at and revoked here; their secret was never stored."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    search_fields = ["user__username", "name", "prefix"]
    readonly_fields = ["user", "key_hash", "prefix", "created_at", "last_used_at"]

    def has_add_permission(self, request) -> bool:
        return False  # a token is created by its owner, who alone sees the secret once


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ["user", "submission", "created_at", "read_at"]
    list_filter = ["read_at"]
    search_fields = ["user__username", "message"]
    raw_id_fields = ["user", "submission"]


@admin.register(ConfirmedEmail)
class ConfirmedEmailAdmin(admin.ModelAdmin):
    list_display = ["user", "email", "confirmed_at"]
    search_fields = ["user__username", "email"]
    raw_id_fields = ["user"]


@admin.register(SentMail)
class SentMailAdmin(admin.ModelAdmin):
    """What the e-mail limits count: looked at, never written here."""

    list_display = ["created_at", "kind", "recipient", "requested_from"]
    list_filter = ["kind"]
    search_fields = ["recipient", "requested_from"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class TaskImportGoldInline(admin.TabularInline):
    model = TaskImportGold
    extra = 0
    raw_id_fields = ["file"]
    readonly_fields = ["phase_index", "file"]
    can_delete = False


@admin.register(TaskImport)
class TaskImportAdmin(admin.ModelAdmin):
    """A bundle waiting for its organiser to confirm the import: looked at or deleted here; the
    task is created only from its preview page."""

    list_display = ["created_at", "user", "file"]
    search_fields = ["user__username", "file__name"]
    readonly_fields = ["user", "file", "options", "created_at"]
    inlines = [TaskImportGoldInline]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(TaskImportGold)
class TaskImportGoldAdmin(admin.ModelAdmin):
    list_display = ["pending", "phase_index", "file"]
    readonly_fields = ["pending", "phase_index", "file"]

    def has_add_permission(self, request) -> bool:
        return False
