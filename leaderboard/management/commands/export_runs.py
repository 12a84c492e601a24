"""``python manage.py export_runs TASK -o runs.zip``: every run of a phase in one zip, as the
organisers' page and the API write it (``<team>/<run id>-<original name>``, ``runs.csv``,
``README.txt``), for a script or a machine without a browser.

``--phase`` names the phase (default the current one), ``--counting`` keeps only the runs that
count, ``--team NAME`` (repeatable) keeps some teams. The archive is written as it is read, so
a phase of any size takes a few megabytes of memory. It is read as an organiser reads it: every
value as stored, with its rank.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from leaderboard import archives
from leaderboard.management.operator import Operator
from leaderboard.models import Task
from leaderboard.selectors.participation import no_such_phase, phase_named
from leaderboard.selectors.runs import ALL_RUNS, COUNTING_RUNS, runs_view


class Command(BaseCommand):
    help = "Write every run of a phase (files, runs.csv with every metric and rank, README.txt) into one zip."

    def add_arguments(self, parser) -> None:
        parser.add_argument("task", help="the task's slug")
        parser.add_argument("-o", "--output", required=True, help="the zip to write ('-': standard output)")
        parser.add_argument("--phase", help="the phase's slug (default: the current phase)")
        parser.add_argument("--counting", action="store_true", help="only the runs that count (one per team)")
        parser.add_argument("--team", action="append", default=[], help="only this team's runs (repeatable)")

    def handle(self, *args, **options) -> None:
        task = Task.objects.filter(slug=options["task"]).first()
        if task is None:
            raise CommandError(f"No task has the slug {options['task']!r}.")
        phase = phase_named(task, options["phase"])
        if phase is None:
            raise CommandError(no_such_phase(task, options["phase"]))
        names = {name.casefold(): pk for pk, name in task.community.teams.values_list("pk", "name")}
        unknown = [name for name in options["team"] if name.casefold() not in names]
        if unknown:
            raise CommandError(f"This task has no team {unknown[0]!r}; its teams: {', '.join(sorted(names))}.")
        teams = frozenset(names[name.casefold()] for name in options["team"]) or None
        which = COUNTING_RUNS if options["counting"] else ALL_RUNS
        view = runs_view(phase=phase, user=Operator(), which=which, team_ids=teams)
        written = 0
        with self.output(options["output"]) as out:
            for piece in archives.runs_archive(view):
                out.write(piece)
                written += len(piece)
        if options["output"] != "-":
            self.stdout.write(f"Wrote {options['output']}: {written:,} bytes.")

    @staticmethod
    def output(path: str):
        if path == "-":
            return open(sys.stdout.fileno(), "wb", closefd=False)
        return Path(path).open("wb")
