"""The Django admin for every model. File contents are never shown inline (they can be large)."""

from django.contrib import admin

from leaderboard.models import (
    Baseline,
    ConfirmedEmail,
    Membership,
    Notification,
    Phase,
    PhaseFile,
    StoredFile,
    Submission,
    Task,
    Team,
)


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


class PhaseInline(admin.StackedInline):
    model = Phase
    extra = 0
    raw_id_fields = ["gold_file", "pending_gold_file"]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "primary_metric", "created_at"]
    search_fields = ["title", "slug"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["organisers"]
    inlines = [PhaseInline]


@admin.register(Phase)
class PhaseAdmin(admin.ModelAdmin):
    list_display = ["name", "task", "opens_at", "closes_at", "counting", "visibility", "feedback"]
    list_filter = ["task", "visibility", "counting"]
    raw_id_fields = ["gold_file", "pending_gold_file"]


@admin.register(PhaseFile)
class PhaseFileAdmin(admin.ModelAdmin):
    list_display = ["title", "phase", "file", "created_at"]
    raw_id_fields = ["file"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "task", "created_at"]
    list_filter = ["task"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "team", "task", "joined_at"]
    list_filter = ["task"]
    autocomplete_fields = ["user", "team"]


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["id", "task", "phase", "team", "kind", "status", "chosen", "created_at", "scored_at", "score_count"]
    list_filter = ["task", "phase", "status", "kind"]
    search_fields = ["team__name", "description"]
    raw_id_fields = ["file", "team", "submitted_by"]
    readonly_fields = ["score_count", "scored_gold_version"]


@admin.register(Baseline)
class BaselineAdmin(admin.ModelAdmin):
    list_display = ["name", "phase", "kind"]
    list_filter = ["phase", "kind"]


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
