"""A task as one zip: ``task.yaml`` (its settings, labels, primary metric, terms, every phase's
settings and files, and optionally its teams and runs), the files it names, a README, and with
the runs each phase's ``runs.csv`` (the index of :mod:`leaderboard.archives`).

Layout of a task::

    task.yaml
    README.txt
    phases/<phase>/gold/<name>             the gold file, as uploaded (none while the phase waits for it)
    phases/<phase>/data/<n>-<name>         the files participants download
    runs/<phase>/runs.csv                  with --runs: every run's facts, values and ranks
    runs/<phase>/<team>/<run id>-<name>    with --runs: every run's file, as uploaded

A task divided into subtasks is one bundle: ``task.yaml`` lists its ``subtasks``, each with its
settings and phases, beside the registration, terms, organisers and teams they share; each
subtask's files are under ``subtasks/<subtask>/phases/...`` and its runs under
``runs/<subtask>/<phase>/...``.

The archive is streamed as it is written; run files are read one at a time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from django.utils import timezone

from leaderboard import archives
from leaderboard.models import PHASE_POLICIES, Community, Phase, StoredFile, Submission, Task
from leaderboard.selectors.runs import run_files, runs_view
from leaderboard.zipstream import ZipEntry, zip_stream

FORMAT = "shared-task-leaderboard/task"
VERSION = 2
"""1: a task (or a subtask, as a task) and its phases, each with its gold file. 2: a phase may
wait for its gold file (``gold: null``), and a task divided into subtasks carries them
(``subtasks``); a version 1 bundle reads as it always did."""
MANIFEST = "task.yaml"
README = "README.txt"


class _Dumper(yaml.SafeDumper):
    """Plain YAML, with texts of several lines written as blocks (readable, and diffable)."""


def _text(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str.__str__(text), style=style)


_Dumper.add_representer(str, _text)
_Dumper.add_multi_representer(str, _text)  # a model's choices (TextChoices members) are texts too


def moment_text(moment: dt.datetime | None) -> str | None:
    """ISO 8601 in UTC with a ``Z``, to the microsecond (upload order within a second is kept)."""
    return None if moment is None else moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Part:
    """A task that holds phases, as the bundle files it: a task (or a subtask exported alone) at
    the top, or a subtask of a divided task under its own folder."""

    task: Task
    folder: str = ""
    """``subtasks/<slug>/`` for a subtask of the task exported, else nothing."""

    def phase_folder(self, phase: Phase) -> str:
        return f"{self.folder}phases/{phase.slug}"

    def runs_folder(self, phase: Phase) -> str:
        return f"runs/{self.task.slug}/{phase.slug}" if self.folder else f"runs/{phase.slug}"


def parts_of(task: Task) -> list[Part]:
    """The tasks of the bundle that hold phases: each subtask of a divided task, else the task."""
    if not task.is_divided:
        return [Part(task)]
    return [Part(subtask, f"subtasks/{subtask.slug}/") for subtask in task.subtasks.order_by("slug")]


def _file_facts(stored_id: int) -> tuple[str, str, int]:
    return StoredFile.objects.values_list("name", "sha256", "size").get(pk=stored_id)


def _phase_document(part: Part, phase: Phase) -> dict[str, Any]:
    folder = part.phase_folder(phase)
    gold = None
    if not phase.waits_for_gold:
        gold_name, gold_sha256, _ = _file_facts(phase.gold_file_id)
        gold = {"file": f"{folder}/gold/{archives.folder_name(gold_name)}", "sha256": gold_sha256}
    data_files = []
    for index, data_file in enumerate(phase.data_files.select_related("file").defer("file__content"), start=1):
        data_files.append(
            {
                "title": data_file.title,
                "file": f"{folder}/data/{index}-{archives.folder_name(data_file.file.name)}",
                "sha256": data_file.file.sha256,
            }
        )
    return {
        "slug": phase.slug,
        "name": phase.name,
        "description": phase.description,
        "opens_at": moment_text(phase.opens_at),
        "closes_at": moment_text(phase.closes_at),
        **{name: getattr(phase, name) for name in PHASE_POLICIES},
        "split_seed": phase.split_seed,
        "gold": gold,
        "data_files": data_files,
        "baselines": [{"kind": kind, "name": name} for kind, name in phase.baselines.values_list("kind", "name")],
    }


def _team_documents(community: Community) -> list[dict[str, Any]]:
    members: dict[int, list[str]] = {}
    for team_id, username in community.memberships.order_by("user__username").values_list("team_id", "user__username"):
        members.setdefault(team_id, []).append(username)
    return [
        {
            "name": team.name,
            "created_at": moment_text(team.created_at),
            "system_name": team.system_name,
            "system_description": team.system_description,
            "paper_url": team.paper_url,
            "members": members.get(team.pk, []),
            "removed": {"at": moment_text(team.removed_at), "reason": team.removed_reason} if team.removed_at else None,
        }
        for team in community.teams.order_by("created_at", "pk")
    ]


def run_path(runs_folder: str, folders: dict[int, str], team_id: int, run_id: int, name: str) -> str:
    return f"{runs_folder}/{archives.run_path(folders[team_id], run_id, name)}"


def _run_documents(parts: list[Part], folders: dict[int, str]) -> list[dict[str, Any]]:
    by_task = {part.task.pk: part for part in parts}
    runs = (
        Submission.objects.filter(phase__task__in=list(by_task))
        .select_related("file", "team", "phase")
        .only(
            "id",
            "kind",
            "description",
            "status",
            "failure",
            "created_at",
            "chosen",
            "contrastive",
            "disqualified_at",
            "disqualified_reason",
            "team__name",
            "phase__slug",
            "phase__task_id",
            "file__name",
            "file__sha256",
        )
        .order_by("id")
    )
    documents = []
    for run in runs.iterator(chunk_size=2000):
        part = by_task[run.phase.task_id]
        documents.append(
            {
                "id": run.pk,
                **({"subtask": part.task.slug} if part.folder else {}),
                "phase": run.phase.slug,
                "team": run.team.name,
                "file": run_path(part.runs_folder(run.phase), folders, run.team_id, run.pk, run.file.name),
                "name": run.file.name,
                "sha256": run.file.sha256,
                "kind": run.kind,
                "uploaded_at": moment_text(run.created_at),
                "description": run.description,
                "status": run.status,
                "failure": run.failure,
                "chosen": run.chosen,
                "contrastive": run.contrastive,
                "disqualified": {"at": moment_text(run.disqualified_at), "reason": run.disqualified_reason}
                if run.disqualified_at
                else None,
            }
        )
    return documents


def _task_fields(task: Task) -> dict[str, Any]:
    """What a task that holds phases says of itself: its address, title, labels and ranking."""
    return {
        "slug": task.slug,
        "title": task.title,
        "description": task.description,
        "labels": list(task.labels),
        **({"outputs": task.outputs} if task.outputs else {}),
        "primary_metric": task.primary_metric,
        "ordinal": task.ordinal,
        "overall_method": task.overall_method,
        "overall_columns": task.overall_columns,
    }


def task_document(task: Task, *, with_runs: bool, folders: dict[int, str]) -> dict[str, Any]:
    """``task.yaml`` as plain data. A subtask goes as a task of its own, with its parent's
    registration, terms, organisers and teams; a task divided into subtasks goes with every
    subtask (``subtasks``: each one's settings and phases) and what they share."""
    community = task.community
    shared = {
        "registration": community.registration,  # a subtask's are its parent's: it moves as a task
        "terms": community.terms,
        "organisers": sorted(community.organisers.values_list("username", flat=True)),
    }
    parts = parts_of(task)
    document: dict[str, Any] = {"format": FORMAT, "version": VERSION, "exported_at": moment_text(timezone.now())}
    if task.is_divided:
        document["task"] = {"slug": task.slug, "title": task.title, "description": task.description, **shared}
        document["subtasks"] = [
            {
                "task": _task_fields(part.task),
                "phases": [_phase_document(part, phase) for phase in part.task.ordered_phases()],
            }
            for part in parts
        ]
    else:
        document["task"] = {**_task_fields(task), **shared}
        document["phases"] = [_phase_document(parts[0], phase) for phase in task.ordered_phases()]
    if with_runs:
        document["teams"] = _team_documents(community)
        document["runs"] = _run_documents(parts, folders)
    return document


def manifest_text(document: dict[str, Any]) -> str:
    header = (
        "# A task of the shared-task leaderboard, exported with its files (README.txt says what each is).\n"
        '# Import it as a new task: the organisers\' page "Import a task", or manage.py import_task.\n'
    )
    return header + yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


README_TEXT = """\
{title}: the task as a bundle

Exported {when} UTC from the shared-task leaderboard. Import it as a new task (the organisers'
page "Import a task", or: python manage.py import_task THIS.zip --slug NEW-ADDRESS
--organiser YOU [--first-opens YYYY-MM-DD]): with its dates, or moved so that the first phase
opens on the day given (next year's edition).

{files}

Every file named in task.yaml carries its SHA-256; an import refuses a file that does not match.
Times are UTC (ISO 8601).
"""
README_COLUMN = 40
"""Where the description of each file starts in the README's list."""


def _listed(path: str, *lines: str) -> str:
    """A file of the README's list: its path, then what it is (on as many lines as given)."""
    indent = " " * README_COLUMN
    return "\n".join([f"{path:<{README_COLUMN - 1}} {lines[0]}", *(indent + line for line in lines[1:])])


def readme_text(task: Task, *, with_runs: bool) -> str:
    phases = "subtasks/<subtask>/phases/<phase>" if task.is_divided else "phases/<phase>"
    runs = "runs/<subtask>/<phase>" if task.is_divided else "runs/<phase>"
    settings = "every subtask's labels and primary metric, " if task.is_divided else ""
    files = [
        _listed(
            "task.yaml",
            "the task's settings, labels, primary metric, terms, every",
            f"{settings}phase's settings, files and baselines{', its teams and runs' if with_runs else ''}",
        ),
        _listed(f"{phases}/gold/<name>", "each phase's gold file, as uploaded (none while it", "waits for it)"),
        _listed(f"{phases}/data/<n>-<name>", "the files participants download in each phase"),
    ]
    if with_runs:
        files += [
            _listed(
                f"{runs}/runs.csv",
                "every run of the phase: who, when, status, whether it",
                "counts, every metric raw and calibrated with its rank",
            ),
            _listed(f"{runs}/<team>/<run id>-<name>", "every run's file, as uploaded"),
        ]
    return README_TEXT.format(title=task.title, when=archives.utc_text(timezone.now()), files="\n".join(files))


def _stored(stored_id: int) -> bytes:
    return bytes(StoredFile.objects.values_list("content", flat=True).get(pk=stored_id))


def bundle_entries(task: Task, *, with_runs: bool, user) -> Iterator[ZipEntry]:
    """Every file of the bundle, one at a time (``user`` reads the runs' indexes: the
    organiser who exports)."""
    now = timezone.now()
    folders = archives.team_folders(dict(task.community.teams.values_list("pk", "name")))
    document = task_document(task, with_runs=with_runs, folders=folders)
    yield ZipEntry(MANIFEST, manifest_text(document).encode(), now)
    yield ZipEntry(README, readme_text(task, with_runs=with_runs).encode(), now)
    parts = parts_of(task)
    listed = document["subtasks"] if task.is_divided else [document]
    for part, part_document in zip(parts, listed, strict=True):
        for phase, phase_document in zip(part.task.ordered_phases(), part_document["phases"], strict=True):
            if phase_document["gold"] is not None:
                yield ZipEntry(phase_document["gold"]["file"], _stored(phase.gold_file_id), phase.opens_at)
            data_files = phase.data_files.order_by("created_at", "id").values_list("file_id", "created_at")
            for (file_id, created_at), data_file in zip(data_files, phase_document["data_files"], strict=True):
                yield ZipEntry(data_file["file"], _stored(file_id), created_at)
    if not with_runs:
        return
    for part in parts:
        for phase in part.task.ordered_phases():
            phase.task = part.task
            view = runs_view(phase=phase, user=user)
            runs_folder = part.runs_folder(phase)
            yield ZipEntry(f"{runs_folder}/{archives.INDEX_NAME}", archives.index_lines(view, folders), now)
            for run in run_files(view):
                path = run_path(runs_folder, folders, run.team_id, run.id, run.name)
                yield ZipEntry(path, run.content, run.uploaded_at)


def task_bundle(task: Task, *, with_runs: bool, user) -> Iterator[bytes]:
    """The bundle as bytes, written as it is read."""
    return zip_stream(bundle_entries(task, with_runs=with_runs, user=user))


def bundle_name(task: Task, *, with_runs: bool) -> str:
    return f"{task.slug}-task{'-with-runs' if with_runs else ''}.zip"
