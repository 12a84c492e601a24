"""``python manage.py export_task TASK -o task.zip [--runs]``: a task as one bundle (its
settings, labels, primary metric, terms, every phase's settings, gold, data files and
baselines in a readable ``task.yaml``, and with ``--runs`` its teams and every run with each
phase's ``runs.csv``), to archive it or to run it again (``import_task``). A task divided into
subtasks goes whole: every subtask, their shared registration, terms and teams."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from leaderboard.bundles.export import task_bundle
from leaderboard.management.operator import Operator
from leaderboard.models import Task


class Command(BaseCommand):
    help = "Write a task (settings, phases, gold and data files; with --runs its teams and runs) as one zip."

    def add_arguments(self, parser) -> None:
        parser.add_argument("task", help="the task's slug")
        parser.add_argument("-o", "--output", required=True, help="the zip to write")
        parser.add_argument("--runs", action="store_true", help="with the teams and every run")

    def handle(self, *args, **options) -> None:
        task = Task.objects.filter(slug=options["task"]).first()
        if task is None:
            raise CommandError(f"No task has the slug {options['task']!r}.")
        written = 0
        with Path(options["output"]).open("wb") as out:
            for piece in task_bundle(task, with_runs=options["runs"], user=Operator()):
                out.write(piece)
                written += len(piece)
        self.stdout.write(f"Wrote {options['output']}: {written:,} bytes.")
