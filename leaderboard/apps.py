from django.apps import AppConfig

from leaderboard import checks  # noqa: F401 (registers the system checks)


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"
