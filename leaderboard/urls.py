"""URLs of the product: tasks, teams, submissions, leaderboards and their analyses."""

from django.urls import path

from leaderboard.views import boards, organisers, reference, registrations, submissions, tasks, teams

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
        path(f"{prefix}analysis/", boards.analysis, name="analysis"),
        path(f"{prefix}analysis.json", boards.analysis_json, name="analysis_json"),
        path(f"{prefix}analysis/hardest-items.csv", boards.analysis_hardest_csv, name="analysis_hardest_csv"),
        path(f"{prefix}analysis/kappa.html", boards.analysis_heatmap, name="analysis_heatmap"),
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
    path("", tasks.task_list, name="task_list"),
    path("references/", reference.references, name="references"),
    path("tasks/new/", organisers.task_create, name="task_create"),
    path("tasks/<slug:slug>/subtasks/new/", organisers.subtask_create, name="subtask_create"),
    path("tasks/import/", organisers.task_import, name="task_import"),
    path("tasks/import/<int:pk>/", organisers.task_import_preview, name="task_import_preview"),
    path("tasks/<slug:slug>/", tasks.task_detail, name="task_detail"),
    path("tasks/<slug:slug>/edit/", organisers.task_edit, name="task_edit"),
    path("tasks/<slug:slug>/rescore/", organisers.task_rescore, name="task_rescore"),
    path("tasks/<slug:slug>/archive/", organisers.task_archive, name="task_archive"),
    path("tasks/<slug:slug>/bundle.zip", organisers.task_bundle_download, name="task_bundle"),
    path("tasks/<slug:slug>/team/", teams.team_detail, name="team_detail"),
    path("tasks/<slug:slug>/submissions/", organisers.organiser_submissions, name="organiser_submissions"),
    path("tasks/<slug:slug>/participants.csv", organisers.participants_csv, name="participants_csv"),
    path("tasks/<slug:slug>/team/invite/", teams.team_invite_regenerate, name="team_invite_regenerate"),
    path("tasks/<slug:slug>/team/leave/", teams.team_leave, name="team_leave"),
    path("tasks/<slug:slug>/team/new/", teams.team_create, name="team_create"),
    path("tasks/<slug:slug>/team/join/", teams.team_join, name="team_join"),
    path("tasks/<slug:slug>/submit/", submissions.submission_create, name="submission_create"),
    path("tasks/<slug:slug>/submissions/<int:pk>/", submissions.submission_detail, name="submission_detail"),
    path(
        "tasks/<slug:slug>/submissions/<int:pk>/status.json",
        submissions.submission_status,
        name="submission_status",
    ),
    path("tasks/<slug:slug>/submissions/<int:pk>/choose/", submissions.submission_choose, name="submission_choose"),
    path("tasks/<slug:slug>/submissions/<int:pk>/mark/", submissions.submission_mark, name="submission_mark"),
    path("tasks/<slug:slug>/submissions/<int:pk>/file/", submissions.submission_file, name="submission_file"),
    path("tasks/<slug:slug>/submissions/<int:pk>/note/", submissions.submission_note, name="submission_note"),
    path("tasks/<slug:slug>/register/", registrations.register, name="register"),
    path("tasks/<slug:slug>/announcement-emails/", registrations.announcement_emails, name="announcement_emails"),
    path("tasks/<slug:slug>/registrations/", registrations.registrations, name="registrations"),
    path("tasks/<slug:slug>/announcements/", registrations.announcements, name="announcements"),
    path("tasks/<slug:slug>/phases/new/", organisers.phase_create, name="phase_create"),
    path("tasks/<slug:slug>/phases/<slug:phase>/edit/", organisers.phase_edit, name="phase_edit"),
    path("tasks/<slug:slug>/phases/<slug:phase>/gold/", organisers.gold_replace, name="gold_replace"),
    path("tasks/<slug:slug>/phases/<slug:phase>/gold.csv", organisers.gold_download, name="gold_download"),
    path("tasks/<slug:slug>/phases/<slug:phase>/files/", organisers.phase_files, name="phase_files"),
    path("tasks/<slug:slug>/phases/<slug:phase>/runs/", organisers.phase_runs, name="phase_runs"),
    path("tasks/<slug:slug>/phases/<slug:phase>/runs.zip", organisers.runs_download, name="runs_download"),
    path("tasks/<slug:slug>/phases/<slug:phase>/analysis/publish/", organisers.hardest_publish, name="hardest_publish"),
    path(
        "tasks/<slug:slug>/phases/<slug:phase>/files/<int:pk>/",
        tasks.phase_file_download,
        name="phase_file_download",
    ),
    path(
        "tasks/<slug:slug>/phases/<slug:phase>/sample-<str:kind>.csv",
        tasks.sample_download,
        name="sample_download",
    ),
    *board_paths("tasks/<slug:slug>/"),
    *board_paths("tasks/<slug:slug>/phases/<slug:phase>/"),
]
