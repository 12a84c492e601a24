"""The runs of a phase as one zip, streamed as it is written: every run's file under
``<team>/<run id>-<original name>``, an index ``runs.csv`` (one line per run: who, when, how it
fared, whether it counts, every metric raw and calibrated with its rank), and a ``README.txt``
that says what each column is.

The index's numbers are the board's: the same stored doubles, written as the board's CSV
writes them (:func:`scoring.engine.formatting.json_value`, then Python's shortest repr that
reads back as the same double), and the same ranks. Cells are spreadsheet-safe
(:func:`leaderboard.exports.csv_cell`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import unicodedata
from collections.abc import Iterator

from django.utils import timezone

from leaderboard.exports import csv_cell, download_name
from leaderboard.models import Phase, Task
from leaderboard.selectors.feedback import PRIMARY_DIGITS, Level
from leaderboard.selectors.runs import COUNTING_RUNS, RunFacts, RunsView, run_facts, run_files
from leaderboard.zipstream import ZipEntry, zip_stream
from scoring.engine.formatting import VALUE_DIGITS, json_value

INDEX_NAME = "runs.csv"
README_NAME = "README.txt"
INDEX_ROWS_AT_ONCE = 200
"""Lines of the index written to the archive at a time."""
FOLDER_MAX_LENGTH = 80
UNSAFE_IN_PATHS = re.compile(r'[\\/:*?"<>|]')
"""Characters no file name may hold on one of the common systems (Windows is the strictest)."""

FIXED_COLUMNS = (
    ("run", "the run's id on the site (its page: /tasks/<task>/submissions/<run>/)"),
    ("team", "the team's name"),
    ("members", "the team's members' user names, separated by semicolons"),
    ("file", "where the run's file is in this archive: <team>/<run id>-<original name>"),
    ("original_name", "the name of the file as the team uploaded it"),
    ("kind", "hard (a label per item) or soft (a probability per label and item)"),
    ("bytes", "the file's size"),
    ("sha256", "the SHA-256 of the file's bytes"),
    ("uploaded_utc", "when the file was uploaded, UTC (YYYY-MM-DD HH:MM:SS)"),
    ("scored_utc", "when its scores were last written, UTC; empty if never"),
    ("status", "scored, failed (see failure), queued or scoring"),
    ("failure", "why scoring failed, if it did"),
    ("counts", "yes if this is the team's run on the leaderboard (the phase's counting rule), no otherwise"),
    ("chosen", "yes if the team chose it to count"),
    ("disqualified", "the organisers' reason, if they disqualified it (a disqualified run never counts)"),
    ("description", "the team's note on the run"),
)


def utc_text(moment: dt.datetime | None) -> str:
    return "" if moment is None else moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def yes_no(flag: bool | None) -> str:
    return "" if flag is None else ("yes" if flag else "no")


def folder_name(name: str) -> str:
    """A team's name as a folder: readable, and valid on every common system (no separators,
    no characters Windows refuses, no leading or trailing dots and spaces, no control
    characters)."""
    text = "".join(ch for ch in unicodedata.normalize("NFC", name) if ch.isprintable())
    text = UNSAFE_IN_PATHS.sub("_", text).strip(" .")[:FOLDER_MAX_LENGTH].strip(" .")
    return text or "team"


def team_folders(team_names: dict[int, str]) -> dict[int, str]:
    """Each team's folder, distinct even where two names read the same once made safe, or
    differ only in case (a case-insensitive disk would merge them): the later team gets its id."""
    folders: dict[int, str] = {}
    taken = {INDEX_NAME.casefold(), README_NAME.casefold()}  # a team called "runs.csv" gets a folder of its own
    for team_id, name in sorted(team_names.items()):
        folder = folder_name(name)
        if folder.casefold() in taken:
            folder = f"{folder} (team {team_id})"
        taken.add(folder.casefold())
        folders[team_id] = folder
    return folders


def run_path(folder: str, run_id: int, file_name: str) -> str:
    return f"{folder}/{run_id}-{folder_name(file_name)}"


def index_header(view: RunsView) -> list[str]:
    header = [name for name, _ in FIXED_COLUMNS]
    for column in view.columns:
        header += [column.id, f"{column.id} rank"]
    return header


def index_cells(view: RunsView, run: RunFacts, folders: dict[int, str]) -> list:
    cells: list = [
        run.id,
        run.team,
        "; ".join(run.members),
        run_path(folders[run.team_id], run.id, run.file_name),
        run.file_name,
        run.kind,
        run.size,
        run.sha256,
        utc_text(run.uploaded_at),
        utc_text(run.scored_at),
        run.status,
        run.failure,
        yes_no(run.counts),
        yes_no(run.chosen),
        run.disqualified,
        run.description,
    ]
    for value, rank in zip(run.values, run.ranks, strict=True):
        cells += [json_value(value), rank]
    return [csv_cell(cell) for cell in cells]


def index_lines(view: RunsView, folders: dict[int, str]) -> Iterator[bytes]:
    """``runs.csv`` (UTF-8), a few hundred lines at a time."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([csv_cell(cell) for cell in index_header(view)])
    for count, run in enumerate(run_facts(view), start=1):
        writer.writerow(index_cells(view, run, folders))
        if count % INDEX_ROWS_AT_ONCE == 0:
            yield out.getvalue().encode()
            out.seek(0)
            out.truncate()
    yield out.getvalue().encode()


def _values_note(view: RunsView) -> str:
    if view.level is Level.ALL:
        return (
            "Each value is the stored double, written as the shortest decimal that reads back as the same double "
            "(as the leaderboard's CSV download writes it); an empty cell is undefined (e.g. 0/0)."
        )
    if view.level is Level.FULL:
        return (
            f"The phase's results are hidden until it closes: values are rounded to {VALUE_DIGITS} decimals, as on "
            "your submissions' pages, and no run is ranked yet."
        )
    if view.level is Level.PRIMARY:
        return (
            f"The phase's results are hidden until it closes, and its feedback policy shows the primary score only, "
            f"rounded to {PRIMARY_DIGITS} decimals; no run is ranked yet."
        )
    return "The phase's results are hidden until it closes, and its feedback policy shows no score until then."


def readme_text(view: RunsView, *, team: str | None, now: dt.datetime) -> str:
    """What the archive is and what every column of its index means."""
    phase = view.phase
    task = phase.task
    chosen = "the runs of the team " + team if team else WHICH_RUNS_TEXT[view.which]
    if view.team_ids is not None and not team:
        chosen += ", of the teams " + ", ".join(sorted(view.team_names.values(), key=str.casefold))
    part = {"all": "every item of the test set", "public": "the public part", "private": "the private part"}
    lines = [
        f"{task.title}, {phase.name} phase: runs",
        "",
        f"Written {utc_text(now)} UTC. This archive holds {chosen}.",
        f"Phase: {utc_text(phase.opens_at)} to {utc_text(phase.closes_at)} UTC; counts: "
        f"{phase.get_counting_display()}; scores on {part.get(view.part, view.part)}.",
        f"{task_labels_text(task)}. Primary metric: {task.primary_metric}.",
        "",
        "Files",
        "  <team>/<run id>-<original name>   each run's file, exactly as uploaded",
        f"  {INDEX_NAME}   one line per run (UTF-8, comma-separated, a header line)",
        "",
        f"Columns of {INDEX_NAME}",
        *(f"  {name}: {meaning}" for name, meaning in FIXED_COLUMNS),
    ]
    if view.columns:
        lines += [
            "  then, for every metric (raw, then prevalence-calibrated: the ids ending in _c), two columns:",
            "    <metric>: the run's value; <metric> rank: its rank on the leaderboard (1 is best, ties share a "
            "rank: 1, 2, 2, 4), only for the run that counts, never for an undefined value",
            "",
            "Metrics",
            *(
                f"  {column.id}: {column.name}{', prevalence-calibrated' if column.calibrated else ''}"
                for column in view.columns
            ),
            "",
            _values_note(view),
            "Text cells that begin with = + - @ get a leading apostrophe, so that a spreadsheet cannot run them.",
        ]
    else:
        lines += ["", _values_note(view)]
    return "\n".join(lines) + "\n"


WHICH_RUNS_TEXT = {
    "all": "every run of the phase",
    COUNTING_RUNS: "the runs that count (each team's run on the leaderboard)",
}


def archive_name(phase: Phase, *, team: str | None = None) -> str:
    """``<task>-<phase>-runs.zip`` (``<task>-<phase>-<team>-runs.zip`` for one team's)."""
    stem = download_name(phase, "zip").removesuffix("-leaderboard.zip")
    return (
        f"{stem}-{re.sub(r'[^A-Za-z0-9_-]+', '-', team).strip('-') or 'team'}-runs.zip" if team else f"{stem}-runs.zip"
    )


def archive_entries(view: RunsView, *, team: str | None = None) -> Iterator[ZipEntry]:
    """The README, the index, then every run's file."""
    now = timezone.now()
    folders = team_folders(view.team_names)
    yield ZipEntry(README_NAME, readme_text(view, team=team, now=now).encode(), now)
    yield ZipEntry(INDEX_NAME, index_lines(view, folders), now)
    for run in run_files(view):
        yield ZipEntry(run_path(folders[run.team_id], run.id, run.name), run.content, run.uploaded_at)


def runs_archive(view: RunsView, *, team: str | None = None) -> Iterator[bytes]:
    """The archive as bytes, written as it is read."""
    return zip_stream(archive_entries(view, team=team))


def task_labels_text(task: Task) -> str:
    """``Labels: a, b, c``, or a task of several outputs' ``Outputs: hate (0, 1), target (0, 1)``."""
    if task.outputs:
        return "Outputs: " + ", ".join(f"{output.name} ({', '.join(output.labels)})" for output in task.scheme.outputs)
    return f"Labels: {', '.join(task.labels)}"
