"""``python manage.py import_task BUNDLE --slug NEW --organiser USER``: a new task from a bundle:
one exported from this site (``task.yaml``), or a CodaLab (``competition.yaml`` v1.5) or
Codabench (version 2) competition bundle.

It prints what it creates and what could not come over (the report the preview page shows),
then creates everything in one transaction: with ``--dry-run`` it stops after the report. The
dates are kept, or moved so that the first phase opens on ``--first-opens`` (next year's
edition). For a competition bundle, ``--columns N=ID,LABEL`` says which columns of phase N's
reference file hold the ids and the labels (``"(line number)"`` for ids by line number),
``--reference-file N=PATH`` which of its files is the reference, ``--gold N=FILE`` gives a
gold file for phase N instead (phases count from 1), and ``--labels`` the task's labels in
order, where the bundle states none (or to reorder them). A phase without a gold file comes over
all the same and waits for it: the report says why, and the task page asks for it. Where phases
ran side by side (tracks, each a subtask here), ``--track N=T`` puts phase N in track T (its
number in the report, from 1) or, with ``T=all``, in every subtask.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from leaderboard.bundles.plan import FilePlan, ImportOptions, ReferenceChoice
from leaderboard.bundles.reading import open_bundle, plan_of
from leaderboard.bundles.report import report_lines
from leaderboard.models import Submission, metric_choices
from leaderboard.services.imports import task_import
from leaderboard.uploads import safe_file_name


def numbered(values: list[str], option: str) -> dict[int, str]:
    """``N=VALUE`` options by phase index (from 0)."""
    found = {}
    for value in values:
        number, _, rest = value.partition("=")
        if not number.isdigit() or int(number) < 1 or not rest:
            raise CommandError(f"{option} {value!r}: write N=VALUE, N the phase's number from 1.")
        found[int(number) - 1] = rest
    return found


class Command(BaseCommand):
    help = "Create a task from a bundle: a task exported from this site, or a CodaLab or Codabench competition bundle."

    def add_arguments(self, parser) -> None:
        parser.add_argument("bundle", help="the bundle (.zip)")
        parser.add_argument("--slug", required=True, help="the new task's address")
        parser.add_argument("--organiser", required=True, help="the user name of its organiser")
        parser.add_argument("--title", default="", help="a new title (default: the bundle's)")
        parser.add_argument("--first-opens", help="YYYY-MM-DD: move every date so that the first phase opens that day")
        parser.add_argument("--without-runs", action="store_true", help="leave the teams and runs of an exported task")
        parser.add_argument("--primary-metric", default="", choices=[key for key, _ in metric_choices()])
        parser.add_argument(
            "--labels", default="", help="the labels in order, comma-separated (a competition bundle that states none)"
        )
        parser.add_argument(
            "--columns", action="append", default=[], help="N=ID,LABEL: the columns of phase N's reference"
        )
        parser.add_argument("--reference-file", action="append", default=[], help="N=PATH: phase N's reference file")
        parser.add_argument(
            "--gold",
            action="append",
            default=[],
            help="N=FILE: a gold file for phase N (optional: it may wait for one)",
        )
        parser.add_argument(
            "--track",
            action="append",
            default=[],
            help="N=T: phase N in track T (from 1), or in every subtask with T=all (phases that ran side by side)",
        )
        parser.add_argument("--dry-run", action="store_true", help="print what would be created, create nothing")

    def handle(self, *args, **options) -> None:
        path = Path(options["bundle"])
        if not path.is_file():
            raise CommandError(f"{path} is not a file.")
        organiser = get_user_model().objects.filter(username=options["organiser"]).first()
        if organiser is None:
            raise CommandError(f"No user is called {options['organiser']!r}.")
        choices = self.import_options(options)
        try:
            bundle = open_bundle(path.read_bytes(), name=path.name)
            plan = plan_of(bundle, choices)
            for line in report_lines(plan, slug=choices.slug):
                self.stdout.write(line)
            if options["dry_run"]:
                self.stdout.write("Dry run: nothing was created.")
                return
            with transaction.atomic():
                task = task_import(organiser=organiser, bundle=bundle, plan=plan, options=choices)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        phases = task.every_phase()
        runs = Submission.objects.filter(phase__in=phases).count()
        waiting = sum(phase.waits_for_gold for phase in phases)
        subtasks = f"{task.subtasks.count()} subtask(s), " if task.is_divided else ""
        self.stdout.write(
            self.style.SUCCESS(f"Created /tasks/{task.slug}/: {subtasks}{len(phases)} phase(s), {runs} run(s).")
        )
        if waiting:
            self.stdout.write(f"{waiting} phase(s) wait for their gold file: give it on the task page.")

    @staticmethod
    def import_options(options) -> ImportOptions:
        first_opens = None
        if options["first_opens"]:
            try:
                first_opens = dt.date.fromisoformat(options["first_opens"])
            except ValueError:
                raise CommandError("--first-opens: write the date as YYYY-MM-DD.") from None
        columns = numbered(options["columns"], "--columns")
        files = numbered(options["reference_file"], "--reference-file")
        references = {}
        for index in columns.keys() | files.keys():
            id_column, _, label_column = columns.get(index, "").partition(",")
            references[index] = ReferenceChoice(files.get(index, ""), id_column.strip(), label_column.strip())
        golds = {}
        for index, gold in numbered(options["gold"], "--gold").items():
            gold_path = Path(gold)
            if not gold_path.is_file():
                raise CommandError(f"--gold {index + 1}={gold}: no such file.")
            golds[index] = FilePlan(
                name=safe_file_name(gold_path.name), content=gold_path.read_bytes(), source=f"given: {gold}"
            )
        return ImportOptions(
            slug=options["slug"],
            title=options["title"],
            with_runs=not options["without_runs"],
            first_opens=first_opens,
            primary_metric=options["primary_metric"],
            labels=tuple(label.strip() for label in options["labels"].split(",") if label.strip()),
            references=references,
            golds=golds,
            tracks={index: track.strip().lower() for index, track in numbered(options["track"], "--track").items()},
        )
