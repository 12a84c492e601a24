"""A phase's derived results, one mechanism for every kind (leaderboard.derived).

What this proves:

- a new kind of derived result is one entry of ``derived.KINDS``: with nothing else written, a
  new score asks for it and it is computed for the new scores, computed once per set of inputs,
  a failure keeps the previous result marked with its reason and is not tried again on the same
  inputs, the next change asks again, and the sweep asks for what is due;
- a bulk write asks once: ``import_submissions`` of several files, and the re-scoring of a
  phase after a new gold file, hand each kind of each phase over once, at the end;
- on the embedded set-up (``DERIVED_RESULTS_IN=thread``) no derived result is computed inside a
  request, an upload through the form or an import command: every computation runs in the
  runner's threads, the upload is answered first, and the command's runs are found by the
  server's sweep.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from leaderboard import derived
from leaderboard.models import ComputationFailed, PhaseAnalysis, PhaseStability
from leaderboard.selectors.boards import board_data, scores_digest
from leaderboard.services import tasks as task_service
from leaderboard.services.teams import team_create
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db


def teams_counted(calls: list, failures: list[str]) -> derived.Kind:
    """A kind of derived result of the test's own: the number of teams a board counts, kept in the
    intervals' row (whose own kind is switched off). ``failures``: the reasons of the next
    computations that fail."""

    def compute(phase, data):
        calls.append(threading.current_thread().name)
        if failures:
            raise ComputationFailed(failures.pop(0))
        return {"result": {"teams": int(data.scored.sum())}}, "counted"

    return derived.Kind(
        "teams_counted",
        PhaseStability,
        stamp=lambda phase, data: scores_digest(data, phase),
        compute=compute,
        pause_s=lambda: 0,
    )


@pytest.fixture
def registered(monkeypatch):
    calls: list[str] = []
    failures: list[str] = []
    monkeypatch.setattr(derived, "KINDS", {"teams_counted": teams_counted(calls, failures)})
    return calls, failures


def stored(task) -> PhaseStability:
    return PhaseStability.objects.get(phase=task.current_phase())


def test_a_new_kind_is_one_registration(
    registered, task, make_user, submit, client, django_capture_on_commit_callbacks
):
    calls, failures = registered
    for name, content in (("Alpha", PERFECT), ("Beta", MOSTLY_A)):
        user = make_user(name.lower())
        team_create(task=task, user=user, name=name)
        submit(task, user, content)
    assert stored(task).result == {"teams": 2} and len(calls) == 2  # one per new score
    assert derived.compute("teams_counted", task.current_phase().pk) == "current already"
    assert client.get(reverse("leaderboard:leaderboard", args=[task.slug])).status_code == 200
    assert len(calls) == 2  # reading computes nothing

    # A failure keeps the previous result, with the reason, and is not tried again on these scores.
    failures.append("out of patience")
    user = make_user("carol")
    team_create(task=task, user=user, name="Carol")
    submit(task, user, PERFECT)
    row = stored(task)
    assert row.result == {"teams": 2} and row.failure == "out of patience" and row.failed_stamp
    with django_capture_on_commit_callbacks(execute=True):
        assert derived.sweep() == 0
    assert len(calls) == 3

    # The next change asks again, and its result clears the failure.
    submit(task, user, MOSTLY_A)
    row = stored(task)
    assert row.result == {"teams": 3} and row.failure == "" and row.requested_at is None
    assert len(calls) == 4

    # The sweep asks for a result that is not of the current scores.
    PhaseStability.objects.filter(pk=row.pk).update(stamp="")
    with django_capture_on_commit_callbacks(execute=True):
        assert derived.sweep() == 1
    assert stored(task).stamp and len(calls) == 5


def test_a_bulk_write_asks_once_for_each_kind_of_each_phase(
    task, organiser, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    handed: list[tuple[str, int]] = []
    hand_over = derived.hand_over
    monkeypatch.setattr(
        derived, "hand_over", lambda kind, phase_id: handed.append((kind, phase_id)) or hand_over(kind, phase_id)
    )
    for name, content in (("alpha", PERFECT), ("beta", MOSTLY_A), ("gamma", GOLD), ("delta", MOSTLY_A)):
        (tmp_path / f"{name}.csv").write_bytes(content)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_submissions", task.slug, str(tmp_path), stdout=open("/dev/null", "w"))  # noqa: SIM115
    phase = task.current_phase()
    assert handed == [("analysis", phase.pk)]  # the intervals are off in tests
    assert PhaseAnalysis.objects.get(phase=phase).n_teams == 4

    # A new gold file re-scores the phase's four runs: asked once, after the last.
    handed.clear()
    with django_capture_on_commit_callbacks(execute=True):
        task_service.gold_preview(phase=phase, gold_name="gold.csv", gold_content=GOLD.replace(b"8,a", b"8,b"))
        assert task_service.gold_confirm(phase=phase) == 4
    assert handed == [("analysis", phase.pk)]


UPLOAD_WAIT_S = 60


def wait_until_current(runner: derived.Runner, phase) -> None:
    deadline = time.monotonic() + UPLOAD_WAIT_S
    while time.monotonic() < deadline and not all_current(phase):
        time.sleep(0.2)
    assert runner.idle(UPLOAD_WAIT_S) and all_current(phase)


def all_current(phase) -> bool:
    """Whether every kind's stored result is of the phase's current scores."""
    data = board_data(phase)
    return all(
        kind.model.objects.filter(phase=phase, stamp=kind.stamp(phase, data)).exists()
        for kind in derived.KINDS.values()
    )


@pytest.mark.django_db(transaction=True)
def test_on_the_embedded_set_up_nothing_derived_is_computed_in_a_request_or_an_upload(
    settings, monkeypatch, make_task, make_user, tmp_path
):
    settings.DERIVED_RESULTS_IN, settings.RECOVERY_EVERY_S = derived.THREAD, 1
    settings.BOOTSTRAP_REPLICATES = 20
    threads: list[tuple[str, str]] = []
    kinds = {}
    for name, kind in derived.KINDS.items():

        def compute(phase, data, kind=kind):
            threads.append((kind.name, threading.current_thread().name))
            return kind.compute(phase, data)

        kinds[name] = derived.Kind(name, kind.model, kind.stamp, compute, kind.pause_s, kind.enabled)
    monkeypatch.setattr(derived, "KINDS", kinds)
    runner = derived.Runner()
    monkeypatch.setattr(derived, "RUNNER", runner)
    task = make_task()
    phase = task.current_phase()
    # An import by a command (a process that serves no page): it computes nothing, claims nothing.
    for name, content in (("beta", MOSTLY_A), ("gamma", GOLD)):
        (tmp_path / f"{name}.csv").write_bytes(content)
    call_command("import_submissions", task.slug, str(tmp_path), stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert threads == [] and not PhaseAnalysis.objects.filter(requested_at__isnull=False).exists()
    runner.start()  # the server starts: its first sweep finds the imported runs
    try:
        wait_until_current(runner, phase)
        assert {kind for kind, _ in threads} == {"analysis", "intervals"}
        # An upload through the form is answered; its derived results are computed after.
        user = make_user("alpha")
        team_create(task=task, user=user, name="Alpha")
        browser = Client()
        browser.force_login(user)
        response = browser.post(
            reverse("leaderboard:submission_create", args=[task.slug]), {"file": SimpleUploadedFile("a.csv", PERFECT)}
        )
        assert response.status_code == 302
        wait_until_current(runner, phase)
    finally:
        runner.stop()
    assert PhaseAnalysis.objects.get(phase=phase).n_teams == 3
    assert len(threads) == 4  # each kind once after the import, once after the upload
    assert {thread for _, thread in threads} <= {"derived-analysis", "derived-intervals"}


def test_the_sweep_reads_a_board_again_only_once_something_changed(
    registered, task, make_user, submit, monkeypatch, django_capture_on_commit_callbacks
):
    user = make_user("alpha")
    team_create(task=task, user=user, name="Alpha")
    submit(task, user, PERFECT)
    assert derived.sweep() == 0  # current: found settled
    reads = []
    monkeypatch.setattr(derived, "board_data", lambda phase: reads.append(phase.pk) or board_data(phase))
    assert derived.sweep() == 0 and reads == []  # nothing changed: the board is not read
    calls, _ = registered
    PhaseStability.objects.filter(phase=task.current_phase()).update(stamp="")  # as if lost
    with django_capture_on_commit_callbacks(execute=True):
        assert derived.sweep() == 1
    assert reads == [task.current_phase().pk] * 2  # the sweep's, then the computation's
    assert stored(task).result == {"teams": 1} and len(calls) == 2
