"""Competition bundles whose phases have no gold file this site can read come over whole: every
phase, its dates, limits, pages and data files; each phase without a gold file waits for one,
and the import says why; the labels a bundle does not state are asked for.

Three shapes, each in a small bundle built here that reproduces it, and in the real bundle
where it is at hand. The real ones are read from their public repositories when
``BUNDLE_REPOSITORIES`` names a folder holding them (``<owner>+<name>/repo``, a git directory),
and built from their files at the commits below; without it those cases are skipped and the
reproductions still run:

- reference files that hold only a header until the test labels are final: SemEval-2018 Task
  12 as first published (habernal/semeval2018-task12, its CodaLab bundle assembled as its
  Makefile does): the trial phase's reference file opens with comment lines, the last naming
  the columns; the test and post-evaluation phases' holds comment lines only;
- no reference data at all, the datasets kept on the platform: the AutoML hackathon of
  codalab/competition-examples (``developers/coopetition``, CodaLab v1.5);
- a Codabench version 2 benchmark of code submissions whose scoring program computes one score
  over several reference files: Mini-AutoML of codalab/competition-examples.
"""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from leaderboard import errors
from leaderboard.bundles.plan import FilePlan, ImportOptions
from leaderboard.bundles.reading import open_bundle, plan_of
from leaderboard.models import Task
from leaderboard.services.imports import task_import
from leaderboard.services.tasks import gold_replace
from tests.leaderboard.bundles.support import (
    ARGUMENT_PAIRS,
    codabench_code_v2,
    header_only_v15,
    labels_csv,
    platform_datasets_v15,
    zip_of,
)

pytestmark = pytest.mark.django_db
REPOSITORIES = Path(os.environ.get("BUNDLE_REPOSITORIES", "/nonexistent"))
SEMEVAL_2018_TASK_12 = ("habernal+semeval2018-task12", "f091415ba99aeacbb74d35f88d05ec0845b497bc")
COMPETITION_EXAMPLES = ("codalab+competition-examples", "c3e7451101eecd131e2d2fcf8374ce892920e033")


def git(repository: tuple[str, str], *arguments: str) -> bytes:
    name, _ = repository
    return subprocess.run(
        ["git", "--git-dir", str(REPOSITORIES / name / "repo"), *arguments], capture_output=True, check=True
    ).stdout


def show(repository: tuple[str, str], path: str) -> bytes:
    return git(repository, "show", f"{repository[1]}:{path}")


def files_under(repository: tuple[str, str], folder: str) -> dict[str, bytes]:
    names = git(repository, "ls-tree", "--name-only", repository[1], f"{folder}/").decode().split()
    return {name.rsplit("/", 1)[-1]: show(repository, name) for name in names}


def available(repository: tuple[str, str]) -> bool:
    try:
        git(repository, "cat-file", "-e", repository[1])
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False
    return True


def semeval_2018_task_12() -> bytes:
    """The CodaLab bundle of SemEval-2018 Task 12 as its Makefile assembles it: the pages and
    competition.yaml at the top, each data folder zipped."""
    folder = "codalab/competition"
    files = files_under(SEMEVAL_2018_TASK_12, f"{folder}/competition")
    for data in ("dev_data", "test_data", "scoring_program"):
        files[f"{data}.zip"] = zip_of(files_under(SEMEVAL_2018_TASK_12, f"{folder}/{data}"))
    return zip_of(files)


@dataclass(frozen=True)
class Shape:
    """A bundle and what its import must give."""

    build: Callable[[], bytes]
    phases: int
    waiting: tuple[bool, ...]
    """Per phase in time order: whether it waits for its gold file."""
    why: str
    """What the report says of each waiting phase."""
    labels: tuple[str, ...] = ()
    """The labels the organiser gives (none: the bundle's)."""
    data_files: int = 0


REAL = "real"
SHAPES = {
    "header only (reproduced)": Shape(
        header_only_v15, 3, (False, True, True), "its reference file truth.txt holds comment lines only, no labels yet"
    ),
    "header line only (reproduced)": Shape(
        lambda: header_only_v15(test_reference=b"id\tlabel\n"),
        3,
        (False, True, True),
        "its reference file truth.txt holds only a header (id\tlabel), no labels yet",
    ),
    "header only (SemEval-2018 Task 12)": Shape(
        semeval_2018_task_12,
        3,
        (False, True, True),
        "its reference file truth.txt holds comment lines only, no labels yet",
    ),
    "no reference data (reproduced)": Shape(
        platform_datasets_v15,
        4,
        (True, True, True, True),
        "(a dataset kept on the platform cannot come over)",
        labels=("0", "1"),
    ),
    "no reference data (AutoML hackathon)": Shape(
        lambda: show(COMPETITION_EXAMPLES, "developers/coopetition/automl_hackathon_bundle.zip"),
        4,
        (True, True, True, True),
        "(a dataset kept on the platform cannot come over)",
        labels=("0", "1"),
    ),
    "Codabench code submission (reproduced)": Shape(
        codabench_code_v2,
        2,
        (True, True),
        "participants submitted code there and its scoring program computed one score from its 3 reference files",
        labels=("0", "1"),
        data_files=2,
    ),
    "Codabench code submission (Mini-AutoML)": Shape(
        lambda: show(COMPETITION_EXAMPLES, "codabench/mini-automl/bundle.zip"),
        2,
        (True, True),
        "participants submitted code there and its scoring program computed one score from its 4 reference files",
        labels=("0", "1"),
        data_files=2,
    ),
}
SOURCES = {
    "header only (SemEval-2018 Task 12)": SEMEVAL_2018_TASK_12,
    "no reference data (AutoML hackathon)": COMPETITION_EXAMPLES,
    "Codabench code submission (Mini-AutoML)": COMPETITION_EXAMPLES,
}
CASES = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(
            name in SOURCES and not available(SOURCES[name]), reason="BUNDLE_REPOSITORIES does not hold it"
        ),
    )
    for name in SHAPES
]


@pytest.mark.parametrize("name", CASES)
def test_every_phase_comes_over_and_those_without_gold_wait(name, organiser, django_capture_on_commit_callbacks):
    shape = SHAPES[name]
    content = shape.build()
    plan = plan_of(open_bundle(content, name="bundle.zip"), ImportOptions())
    assert len(plan.phases) == shape.phases
    assert [phase.gold is None for phase in sorted(plan.phases, key=lambda p: p.opens_at)] == list(shape.waiting)
    assert all(shape.why in phase.gold_problem for _, phase in plan.waiting())
    if shape.labels:  # the bundle states none: the import asks for them, and creates nothing meanwhile
        assert not plan.ready and plan.labels == ()
        with pytest.raises(ValidationError) as caught:
            task_import(
                organiser=organiser,
                bundle=open_bundle(content, name="bundle.zip"),
                plan=plan,
                options=ImportOptions(slug="x"),
            )
        assert errors.problem_codes(caught.value) == {"IMPORT_NEEDS_LABELS"} and not Task.objects.exists()
    options = ImportOptions(slug="imported", labels=shape.labels)
    bundle = open_bundle(content, name="bundle.zip")
    with django_capture_on_commit_callbacks(execute=True):
        task = task_import(organiser=organiser, bundle=bundle, plan=plan_of(bundle, options), options=options)
    phases = task.ordered_phases()
    assert [phase.name for phase in phases] == [phase.name for phase in sorted(plan.phases, key=lambda p: p.opens_at)]
    assert [phase.waits_for_gold for phase in phases] == list(shape.waiting)
    assert [(phase.opens_at, phase.closes_at, phase.max_total) for phase in phases] == [
        (phase.opens_at, phase.closes_at, phase.max_total) for phase in sorted(plan.phases, key=lambda p: p.opens_at)
    ]
    assert sum(phase.data_files.count() for phase in phases) == shape.data_files
    assert task.title == plan.title and task.terms == plan.terms and task.description == plan.description
    assert all(phase.baselines.count() == (0 if phase.waits_for_gold else 3) for phase in phases)

    # Giving a waiting phase its gold file later opens it as usual.
    later = next(phase for phase in phases if phase.waits_for_gold)
    gold = labels_csv([(f"item{i}", task.labels[i % len(task.labels)]) for i in range(6)])
    with django_capture_on_commit_callbacks(execute=True):
        gold_replace(phase=later, gold_name="gold.csv", gold_content=gold)
    later.refresh_from_db()
    assert not later.waits_for_gold and later.gold_version == 1 and later.baselines.count() == 3


def test_the_header_of_semeval_s_trial_file_names_its_columns():
    """The trial phase's gold file: the ids and labels of its tab-separated lines, its comment
    lines left out, the last of them read as the header."""
    plan = plan_of(open_bundle(header_only_v15(), name="bundle.zip"), ImportOptions())
    trial, test, _ = plan.phases
    assert plan.labels == ("0", "1") and not plan.questions
    assert trial.gold.content == labels_csv(ARGUMENT_PAIRS) and trial.gold_items == len(ARGUMENT_PAIRS)
    assert test.visibility == "after_close" and "Test: its results were hidden" in "\n".join(plan.notes)


def test_the_command_asks_for_labels_and_lists_the_waiting_phases(tmp_path, organiser):
    bundle = tmp_path / "hackathon.zip"
    bundle.write_bytes(platform_datasets_v15())
    arguments = ("import_task", str(bundle), "--slug", "hack", "--organiser", "organiser")
    with pytest.raises(Exception, match="The bundle states no labels") as caught:
        call_command(*arguments, stdout=io.StringIO())
    assert type(caught.value).__name__ == "CommandError" and not Task.objects.exists()
    out = io.StringIO()
    call_command(*arguments, "--labels", "0,1", stdout=out)
    report = out.getvalue()
    assert "labels: (none found: --labels)" not in report and "labels: 0, 1;" in report
    assert "Waiting for their gold file (no upload, no board until it is given" in report
    assert "  - Tweak 1: the bundle has no file or folder '0d3c1c52-1a5b-4f0e-9d51-5f0a4cbe1111'" in report
    assert "Created /tasks/hack/: 4 phase(s), 0 run(s).\n4 phase(s) wait for their gold file" in report


def test_a_phase_without_gold_may_still_take_one_at_import(organiser, django_capture_on_commit_callbacks):
    """The gold file given for a waiting phase (the preview's field, ``--gold``) is its own."""
    content = header_only_v15()
    gold = FilePlan(name="test.csv", content=labels_csv(ARGUMENT_PAIRS[:10]), source="given: test.csv")
    options = ImportOptions(slug="with-test", golds={1: gold})
    bundle = open_bundle(content, name="bundle.zip")
    task = task_import(organiser=organiser, bundle=bundle, plan=plan_of(bundle, options), options=options)
    assert [phase.waits_for_gold for phase in task.ordered_phases()] == [False, False, True]
    assert task.ordered_phases()[1].baselines.count() == 3
