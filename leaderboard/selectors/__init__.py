"""Selectors: every function that reads rows, a module per subject (boards, participation,
feedback, organisers, notifications). Import them from their module: this package re-exports
nothing. What a whole page shows is assembled from them in :mod:`leaderboard.pages`.
"""
