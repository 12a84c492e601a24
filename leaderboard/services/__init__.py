"""Services: every function that writes, a module per subject (tasks and phases, teams,
submissions, scoring, registrations, organisers' decisions, notifications, API tokens).
Keyword-only arguments, one transaction each. Import them from their module: this package
re-exports nothing, so that importing one service never imports them all (nor a cycle).

Problems a person can fix come out as ``ValidationError``\\ s made from the named constants of
:mod:`leaderboard.errors`, keyed by the form field they belong to.
"""
