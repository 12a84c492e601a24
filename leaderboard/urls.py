"""URLs of the product: tasks, teams, submissions, leaderboards and their analyses."""

from django.urls import path

from leaderboard.views import boards, participation, reference, registrations

app_name = "leaderboard"


def board_paths(prefix: str) -> list:
    """The results pages of a phase under ``prefix``: with a ``<phase>`` in it, that phase's;
    without, the task's current phase's. Both share their names, so ``{% url %}`` picks by the
    arguments given."""
    return [
        path(f"{prefix}leaderboard/", boards.leaderboard, name="leaderboard"),
        path(f"{prefix}leaderboard.csv", boards.leaderboard_csv, name="leaderboard_csv"),
        path(f"{prefix}leaderboard.json", boards.leaderboard_json, name="leaderboard_json"),
        path(f"{prefix}leaderboard.tex", boards.leaderboard_tex, name="leaderboard_tex"),
        path(f"{prefix}metrics/<path:column>/", boards.metric_detail, name="metric_detail"),
        path(f"{prefix}disagreements/", boards.disagreements, name="disagreements"),
        path(f"{prefix}what-if/", boards.what_if, name="what_if"),
        path(f"{prefix}shake-up/", boards.shake_up, name="shake_up"),
        path(
            f"{prefix}disagreements/heatmap.html",
            boards.disagreement_figure,
            {"figure": "heatmap"},
            name="disagreement_heatmap",
        ),
        path(
            f"{prefix}disagreements/rank-chart.html",
            boards.disagreement_figure,
            {"figure": "rank-chart"},
            name="disagreement_rank_chart",
        ),
    ]


urlpatterns = [
    path("", participation.task_list, name="task_list"),
    path("references/", reference.references, name="references"),
    path("tasks/new/", participation.task_create, name="task_create"),
    path("tasks/<slug:slug>/", participation.task_detail, name="task_detail"),
    path("tasks/<slug:slug>/edit/", participation.task_edit, name="task_edit"),
    path("tasks/<slug:slug>/rescore/", participation.task_rescore, name="task_rescore"),
    path("tasks/<slug:slug>/team/", participation.team_detail, name="team_detail"),
    path("tasks/<slug:slug>/submissions/", participation.organiser_submissions, name="organiser_submissions"),
    path("tasks/<slug:slug>/participants.csv", participation.participants_csv, name="participants_csv"),
    path("tasks/<slug:slug>/team/invite/", participation.team_invite_regenerate, name="team_invite_regenerate"),
    path("tasks/<slug:slug>/team/leave/", participation.team_leave, name="team_leave"),
    path("tasks/<slug:slug>/team/new/", participation.team_create, name="team_create"),
    path("tasks/<slug:slug>/team/join/", participation.team_join, name="team_join"),
    path("tasks/<slug:slug>/submit/", participation.submission_create, name="submission_create"),
    path("tasks/<slug:slug>/submissions/<int:pk>/", participation.submission_detail, name="submission_detail"),
    path(
        "tasks/<slug:slug>/submissions/<int:pk>/status.json",
        participation.submission_status,
        name="submission_status",
    ),
    path("tasks/<slug:slug>/submissions/<int:pk>/choose/", participation.submission_choose, name="submission_choose"),
    path("tasks/<slug:slug>/submissions/<int:pk>/file/", participation.submission_file, name="submission_file"),
    path("tasks/<slug:slug>/submissions/<int:pk>/note/", participation.submission_note, name="submission_note"),
    path("tasks/<slug:slug>/register/", registrations.register, name="register"),
    path("tasks/<slug:slug>/announcement-emails/", registrations.announcement_emails, name="announcement_emails"),
    path("tasks/<slug:slug>/registrations/", registrations.registrations, name="registrations"),
    path("tasks/<slug:slug>/announcements/", registrations.announcements, name="announcements"),
    path("tasks/<slug:slug>/phases/new/", participation.phase_create, name="phase_create"),
    path("tasks/<slug:slug>/phases/<slug:phase>/edit/", participation.phase_edit, name="phase_edit"),
    path("tasks/<slug:slug>/phases/<slug:phase>/gold/", participation.gold_replace, name="gold_replace"),
    path("tasks/<slug:slug>/phases/<slug:phase>/gold.csv", participation.gold_download, name="gold_download"),
    path("tasks/<slug:slug>/phases/<slug:phase>/files/", participation.phase_files, name="phase_files"),
    path(
        "tasks/<slug:slug>/phases/<slug:phase>/files/<int:pk>/",
        participation.phase_file_download,
        name="phase_file_download",
    ),
    path(
        "tasks/<slug:slug>/phases/<slug:phase>/sample-<str:kind>.csv",
        participation.sample_download,
        name="sample_download",
    ),
    *board_paths("tasks/<slug:slug>/"),
    *board_paths("tasks/<slug:slug>/phases/<slug:phase>/"),
]
