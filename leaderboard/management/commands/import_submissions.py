"""``python manage.py import_submissions TASK DIR``: organisers who collected prediction files
elsewhere (by e-mail, from another platform) load them, a team per file.

Each file's stem names its team (``DIR/team-x.csv`` → team "team-x"). A team that does not
exist yet is created with a stand-in member (an inactive account with no password, named
``import-<task id>-<hash of the team name>``) that no one can log in as; an existing team
submits through its first member, so a real team's files land in its own history. Every file
then goes through the same service (with its team, in one transaction: a refused
file leaves no team behind) as an upload on the site: the same validation, the same
dates and limits (``--submitted-at`` says when the files were collected; it must lie within
the task's dates), the same scoring. Nothing is refused silently: the summary lists every
refused file with its reason. The phase's derived results (its intervals, its analysis) are asked
for once, after the last file (:func:`leaderboard.derived.asked_once`), so a file costs the same
at any size of the board.

Reruns are safe: a file whose exact content the team already submitted is skipped, so after
fixing the refused files, run the same command again and only those are imported.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from leaderboard import derived, errors
from leaderboard.models import Membership, StoredFile, Submission, Task
from leaderboard.names import name_key
from leaderboard.services import submissions as submission_service
from leaderboard.services import teams as team_service

DESCRIPTION = "imported by import_submissions"
BAR_WIDTH = 30


def stand_in_member(task: Task, team_name: str):
    """The inactive account that holds a team created by the import (one per task and name)."""
    digest = hashlib.sha256(name_key(team_name).encode()).hexdigest()[:12]
    user, created = get_user_model().objects.get_or_create(
        username=f"import-{task.pk}-{digest}", defaults={"is_active": False}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def submitter_of(task: Task, team_name: str):
    """The member through whom a file of ``team_name`` is submitted, creating the team if need be."""
    team = task.community.teams.filter(name_key=name_key(team_name)).first()
    if team is None:
        user = stand_in_member(task, team_name)
        team_service.team_create(task=task, user=user, name=team_name)
        return user
    membership = Membership.objects.filter(team=team).select_related("user").order_by("joined_at", "pk").first()
    if membership is None:
        raise errors.NOT_A_MEMBER.error()
    return membership.user


def already_submitted(task: Task, team_name: str, content: bytes, now: dt.datetime) -> bool:
    """The team uploaded these very bytes to the phase open at ``now`` already. Its own runs are
    read, by the team's index, not every run of the phase (whose files the database would read
    through to reach their digests: a file's time would grow with the board)."""
    team = task.community.teams.filter(name_key=name_key(team_name)).first()
    phase = task.open_phase(now)
    if team is None or phase is None:
        return False
    files = [file for run_phase, file in team.submissions.values_list("phase_id", "file_id") if run_phase == phase.pk]
    return StoredFile.objects.filter(pk__in=files, sha256=hashlib.sha256(content).hexdigest()).exists()


class Command(BaseCommand):
    help = (
        "Import a folder of prediction files into the phase of a task open at --submitted-at: a team per file, "
        "named by the file's stem."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("task", help="the task's slug")
        parser.add_argument("directory", help="a folder of prediction files (hidden files are ignored)")
        parser.add_argument(
            "--submitted-at",
            help="when the files were collected (ISO 8601, e.g. 2025-01-31T12:00Z; default now): dates and "
            "daily limits are checked against it",
        )

    def handle(self, *args, **options) -> None:
        task = Task.objects.filter(slug=options["task"]).first()
        if task is None:
            raise CommandError(f"No task has the slug {options['task']!r}.")
        folder = Path(options["directory"])
        if not folder.is_dir():
            raise CommandError(f"{folder} is not a folder.")
        now = self.moment(options["submitted_at"])
        files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise CommandError(f"{folder} holds no file.")
        imported: list[tuple[Path, Submission]] = []
        skipped: list[Path] = []
        refused: list[tuple[Path, str, str]] = []
        with derived.asked_once():
            for index, path in enumerate(files, start=1):
                self.progress(index, len(files), path.name)
                try:
                    submission = self.one_file(task, path, now)
                except ValidationError as error:
                    refused.append((path, ",".join(sorted(errors.problem_codes(error))), " ".join(error.messages)))
                else:
                    (skipped.append(path) if submission is None else imported.append((path, submission)))
        self.summary(imported, skipped, refused)

    def one_file(self, task: Task, path: Path, now: dt.datetime) -> Submission | None:
        """Submit one file for the team it names (``None``: the team submitted these bytes already)."""
        content = path.read_bytes()
        if already_submitted(task, path.stem, content, now):
            return None
        with transaction.atomic():  # a refused file leaves no team behind; scoring runs on commit
            user = submitter_of(task, path.stem)
            return submission_service.submission_create(
                task=task, user=user, name=path.name, content=content, description=DESCRIPTION, now=now
            )

    def moment(self, text: str | None) -> dt.datetime:
        if not text:
            return timezone.now()
        moment = parse_datetime(text.replace("Z", "+00:00"))
        if moment is None:
            raise CommandError(f"--submitted-at {text!r} is not an ISO 8601 date and time.")
        return moment if timezone.is_aware(moment) else timezone.make_aware(moment, dt.UTC)

    def progress(self, done: int, total: int, name: str) -> None:
        filled = BAR_WIDTH * done // total
        line = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} {name}"
        if self.stdout.isatty():
            self.stdout.write(f"\r{line[:100]:<100}", ending="\n" if done == total else "")
            self.stdout.flush()
        else:
            self.stdout.write(line)

    def summary(self, imported, skipped, refused) -> None:
        self.stdout.write(
            f"Imported {len(imported)}, skipped {len(skipped)} (already imported), refused {len(refused)}."
        )
        for path, submission in imported:
            self.stdout.write(
                f"  imported {path.name}: team {submission.team.name!r}, #{submission.pk} {submission.status}"
            )
        for path in skipped:
            self.stdout.write(f"  skipped {path.name}: the team already submitted this exact file")
        if refused:
            self.stdout.write(self.style.WARNING("Refused:"))
            for path, code, message in refused:
                self.stdout.write(f"  {path.name}: {code}: {message}")
