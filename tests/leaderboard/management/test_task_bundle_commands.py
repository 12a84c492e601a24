"""``manage.py export_task`` and ``import_task``: a task as a bundle from a shell, and back.

What this proves: a dry run prints what would be created (and what cannot come over) and
creates nothing; an import creates the task with the answers given on the command line
(columns of a reference file, a gold file, a first opening day); a bad bundle is refused with
its message; and the demo exported from one fresh site and imported into another gives boards
whose CSV downloads are the same bytes (the run ids too: runs are created in their original
order).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from leaderboard.models import Task
from tests.leaderboard.bundles.support import GOLD_PAIRS, codabench_v2, codalab_v15, labels_csv, zip_of

pytestmark = pytest.mark.django_db
REPO = Path(__file__).resolve().parents[3]


def run(*arguments: str) -> str:
    out = io.StringIO()
    call_command(*arguments, stdout=out)
    return out.getvalue()


def test_a_dry_run_creates_nothing(tmp_path, organiser):
    bundle = tmp_path / "competition.zip"
    bundle.write_bytes(codabench_v2())
    report = run("import_task", str(bundle), "--slug", "wheat", "--organiser", "organiser", "--dry-run")
    assert "From a Codabench competition (competition.yaml version 2):" in report
    assert "Development Phase (development-phase): 2026-01-15 00:00 – 2026-02-15 00:00 UTC" in report
    assert "The docker image (codalab/codalab-legacy:py39) does not come over" in report
    assert "Dry run: nothing was created." in report and not Task.objects.exists()


def test_an_import_with_answers_from_the_command_line(tmp_path, organiser):
    bundle, gold = tmp_path / "competition.zip", tmp_path / "gold.csv"
    reference = labels_csv([(label, item) for item, label in GOLD_PAIRS], header="")
    bundle.write_bytes(codalab_v15(reference=reference))
    gold.write_bytes(labels_csv(GOLD_PAIRS))
    report = run(
        "import_task",
        str(bundle),
        "--slug",
        "sentiment",
        "--organiser",
        "organiser",
        "--columns",
        "1=column 2,column 1",
        "--gold",
        "2=" + str(gold),
        "--first-opens",
        "2030-01-07",
    )
    assert "Created /tasks/sentiment/: 2 phase(s), 0 run(s)." in report
    task = Task.objects.get(slug="sentiment")
    assert [str(phase.opens_at.date()) for phase in task.ordered_phases()] == ["2030-01-07", "2030-02-07"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--organiser", "nobody"], "No user is called 'nobody'"),
        (["--first-opens", "next monday"], "--first-opens: write the date as YYYY-MM-DD"),
        (["--gold", "x=y"], "--gold 'x=y': write N=VALUE"),
    ],
)
def test_bad_arguments_are_refused(tmp_path, organiser, arguments, message):
    bundle = tmp_path / "competition.zip"
    bundle.write_bytes(codabench_v2())
    organiser_arguments = [] if "--organiser" in arguments else ["--organiser", "organiser"]
    with pytest.raises(CommandError, match=message):
        call_command("import_task", str(bundle), "--slug", "x", *organiser_arguments, *arguments)


def test_a_bad_bundle_is_refused_with_its_message(tmp_path, organiser):
    bundle = tmp_path / "evil.zip"
    bundle.write_bytes(zip_of({"competition.yaml": b"title: !!python/name:os.system\n"}))
    message = "competition.yaml: line 1: the tag '!!python/name:os.system' is refused"
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("import_task", str(bundle), "--slug", "x", "--organiser", "organiser")


def manage(database: Path, *arguments: str) -> str:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"sqlite:///{database}",
        "LEADERBOARD_VAR_DIR": str(database.parent),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


BOARDS = (
    "import sys\n"
    "from leaderboard.models import Task\n"
    "from leaderboard.pages.results import export\n"
    "for task in Task.objects.get(slug='semeval-2017-task-4').subtasks.order_by('slug'):\n"
    "    for phase in task.ordered_phases():\n"
    "        sys.stdout.write(f'{task.slug} {phase.slug}\\n' + export(phase=phase, kind='csv').decode())\n"
)


@pytest.mark.slow
def test_the_demo_moves_to_a_fresh_site_with_byte_identical_boards(tmp_path):
    """The whole demo, both subtasks in one bundle: every board of every subtask is the same
    bytes on the new site, the run ids too."""
    first, second = tmp_path / "first.sqlite3", tmp_path / "second.sqlite3"
    bundle = tmp_path / "demo.zip"
    manage(first, "migrate", "-v0")
    manage(first, "load_demo")
    manage(first, "export_task", "semeval-2017-task-4", "-o", str(bundle), "--runs")
    manage(second, "migrate", "-v0")
    manage(second, "shell", "-v0", "-c", "from django.contrib.auth.models import User; User.objects.create_user('org')")
    report = manage(second, "import_task", str(bundle), "--slug", "semeval-2017-task-4", "--organiser", "org")
    assert "Created /tasks/semeval-2017-task-4/: 2 subtask(s), 3 phase(s), 26 run(s)." in report
    before, after = manage(first, "shell", "-v0", "-c", BOARDS), manage(second, "shell", "-v0", "-c", BOARDS)
    assert before.count("semeval-2017-task-4a ") == 2 and before.count("semeval-2017-task-4b evaluation\n") == 1
    assert '"Team A","team","scored",' in before and ',"contrastive",' in before
    # Each phase's board has the teams' majority vote and oracle, never ranked.
    assert before.count('"Majority vote of the teams","majority_vote","the teams\' runs together, not ranked",') == 3
    assert after == before
