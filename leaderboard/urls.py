"""URLs of the product: tasks, teams, submissions, leaderboards and their analyses."""

from django.urls import path

from leaderboard.views import boards, participation, reference

app_name = "leaderboard"

urlpatterns = [
    path("", participation.task_list, name="task_list"),
    path("references/", reference.references, name="references"),
    path("tasks/new/", participation.task_create, name="task_create"),
    path("tasks/<slug:slug>/", participation.task_detail, name="task_detail"),
    path("tasks/<slug:slug>/edit/", participation.task_edit, name="task_edit"),
    path("tasks/<slug:slug>/gold/", participation.gold_replace, name="gold_replace"),
    path("tasks/<slug:slug>/gold.csv", participation.gold_download, name="gold_download"),
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
    path("tasks/<slug:slug>/leaderboard/", boards.leaderboard, name="leaderboard"),
    path("tasks/<slug:slug>/leaderboard.csv", boards.leaderboard_csv, name="leaderboard_csv"),
    path("tasks/<slug:slug>/leaderboard.json", boards.leaderboard_json, name="leaderboard_json"),
    path("tasks/<slug:slug>/leaderboard.tex", boards.leaderboard_tex, name="leaderboard_tex"),
    path("tasks/<slug:slug>/metrics/<path:column>/", boards.metric_detail, name="metric_detail"),
    path("tasks/<slug:slug>/disagreements/", boards.disagreements, name="disagreements"),
    path(
        "tasks/<slug:slug>/disagreements/heatmap.html",
        boards.disagreement_figure,
        {"figure": "heatmap"},
        name="disagreement_heatmap",
    ),
    path(
        "tasks/<slug:slug>/disagreements/rank-chart.html",
        boards.disagreement_figure,
        {"figure": "rank-chart"},
        name="disagreement_rank_chart",
    ),
]
