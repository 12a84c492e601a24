"""A public/private split of a phase's test set: while the phase runs, every score shown (board,
submission page, API) is the engine's score on the public items alone; after the close the final
ranking uses the private part (or every item, as the organiser chose). The split is fixed,
seeded and recorded, and the shake-up shows how ranks moved."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from leaderboard import derived
from leaderboard.errors import problem_codes
from leaderboard.models import Phase, PhaseStability, Submission
from leaderboard.selectors.boards import leaderboard
from leaderboard.services.tasks import phase_update
from leaderboard.services.teams import team_create
from scoring.engine.bootstrap import bootstrap
from scoring.engine.columns import Column, paired_columns, ranking_columns
from scoring.engine.intervals_json import interval_json
from scoring.engine.scorer import score_files
from scoring.engine.split import part_masks, private_mask

pytestmark = pytest.mark.django_db

LABELS = ["a", "b", "c"]
N_ITEMS = 60
RNG = np.random.default_rng(7)
GOLD_CODES = RNG.integers(0, 3, size=N_ITEMS)
IDS = [f"item{i:03d}" for i in range(N_ITEMS)]


def csv_of(ids, codes) -> bytes:
    return ("id,label\n" + "".join(f"{i},{LABELS[c]}\n" for i, c in zip(ids, codes, strict=True))).encode()


def noisy(error_rate: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    wrong = rng.random(N_ITEMS) < error_rate
    return np.where(wrong, rng.integers(0, 3, size=N_ITEMS), GOLD_CODES)


PREDICTIONS = {"Alpha": noisy(0.2, 1), "Beta": noisy(0.35, 2), "Gamma": noisy(0.5, 3)}


@pytest.fixture
def split_task(make_task, make_user, submit):
    task = make_task("split", gold=csv_of(IDS, GOLD_CODES), private_percent=40)
    for name, codes in PREDICTIONS.items():
        user = make_user(name.lower())
        team_create(task=task, user=user, name=name)
        submit(task, user, csv_of(IDS, codes))
    return task


def engine_scores_on(mask: np.ndarray, codes: np.ndarray):
    """The standalone scorer's report on the items of ``mask`` only (files written out)."""
    ids = [item for item, keep in zip(IDS, mask, strict=True) if keep]
    return score_files(csv_of(ids, GOLD_CODES[mask]), csv_of(ids, codes[mask]), labels=LABELS)


def close(phase: Phase) -> None:
    now = timezone.now()
    phase_update(
        phase=phase, settings={"opens_at": now - dt.timedelta(days=3), "closes_at": now - dt.timedelta(minutes=1)}
    )


def test_the_split_is_seeded_exact_and_reproducible():
    mask = private_mask(1000, percent=30, seed=5)
    assert mask.sum() == 300
    assert (private_mask(1000, percent=30, seed=5) == mask).all()
    assert (private_mask(1000, percent=30, seed=6) != mask).any()
    masks = part_masks(1000, percent=30, seed=5)
    assert (masks["public"] == ~masks["private"]).all()
    assert not private_mask(10, percent=0, seed=1).any()


def test_the_phase_records_its_split(split_task):
    phase = split_task.current_phase()
    assert (phase.private_percent, phase.has_split, phase.shown_part()) == (40, True, "public")
    # 128 random bits: a seed below 2**64 comes once in 2**64 draws, one below 2**31 never.
    assert phase.split_seed_number.bit_length() > 64


@pytest.mark.both_kinds
def test_during_the_phase_the_board_shows_the_engines_scores_on_the_public_part(split_task):
    phase = split_task.current_phase()
    public = part_masks(N_ITEMS, percent=40, seed=phase.split_seed_number)["public"]
    board = leaderboard(phase=phase, calibrated=None)
    assert board.part == "public"
    for entry in board.entries:
        expected = engine_scores_on(public, PREDICTIONS[entry.name])
        assert (
            Submission.objects.get(pk=entry.submission_id).part("public").confusion_matrix
            == expected.as_json()["confusion_matrix"]
        )
        for key in ("accuracy", "macro_f1", "kappa", "mcc"):
            assert entry.values[key] == expected.metrics[key]
            assert entry.values[f"{key}_c"] == expected.calibrated[key]
        assert entry.values["recall[b]"] == expected.per_class["b"]["recall"]


@pytest.mark.both_kinds
def test_after_the_close_the_final_board_uses_the_private_part(split_task):
    phase = split_task.current_phase()
    close(phase)
    private = part_masks(N_ITEMS, percent=40, seed=phase.split_seed_number)["private"]
    board = leaderboard(phase=phase, calibrated=False)
    assert board.part == "private"
    for entry in board.entries:
        assert entry.values["macro_f1"] == engine_scores_on(private, PREDICTIONS[entry.name]).metrics["macro_f1"]


def test_the_final_ranking_may_use_every_item(split_task):
    phase = split_task.current_phase()
    phase.final_part = Phase.FinalPart.ALL
    phase.save(update_fields=["final_part"])
    close(phase)
    board = leaderboard(phase=phase, calibrated=False)
    everything = np.ones(N_ITEMS, dtype=bool)
    assert board.part == "all"
    for entry in board.entries:
        assert entry.values["macro_f1"] == engine_scores_on(everything, PREDICTIONS[entry.name]).metrics["macro_f1"]


def test_the_split_is_fixed_once_the_phase_has_opened(split_task, make_task):
    phase = split_task.current_phase()
    with pytest.raises(ValidationError) as caught:
        phase_update(phase=phase, settings={"private_percent": 20})
    assert problem_codes(caught.value) == {"SPLIT_FIXED"}
    later = make_task(
        "later", opens_at=timezone.now() + dt.timedelta(days=1), closes_at=timezone.now() + dt.timedelta(days=4)
    )
    upcoming = later.current_phase()
    phase_update(phase=upcoming, settings={"private_percent": 25})
    upcoming.refresh_from_db()
    assert upcoming.private_percent == 25 and upcoming.split_seed_number.bit_length() > 64
    with pytest.raises(ValidationError) as caught:
        phase_update(phase=upcoming, settings={"private_percent": 95})
    assert problem_codes(caught.value) == {"BAD_SPLIT"}


def test_baselines_are_scored_on_the_part_the_board_shows(split_task):
    phase = split_task.current_phase()
    public = part_masks(N_ITEMS, percent=40, seed=phase.split_seed_number)["public"]
    board = leaderboard(phase=phase, calibrated=False)
    majority = next(entry for entry in board.baselines if entry.name.startswith("Majority"))
    counts = np.bincount(GOLD_CODES[public], minlength=3)
    assert majority.values["accuracy"] == pytest.approx(counts.max() / counts.sum())


@pytest.mark.both_kinds
def test_a_team_sees_its_public_part_scores_on_its_submission_page(client, split_task):
    phase = split_task.current_phase()
    submission = phase.submissions.get(team__name="Alpha")
    public = part_masks(N_ITEMS, percent=40, seed=phase.split_seed_number)["public"]
    expected = engine_scores_on(public, PREDICTIONS["Alpha"])
    client.force_login(submission.team.members.get())
    page = client.get(submission.get_absolute_url()).content.decode()
    assert f"{expected.metrics['macro_f1']:.4f}" in page
    assert "public part" in page


@pytest.mark.both_kinds
def test_the_board_says_on_which_part_it_is_computed(client, split_task):
    url = reverse("leaderboard:leaderboard", args=[split_task.slug])
    assert "public part" in client.get(url).content.decode()
    close(split_task.current_phase())
    page = client.get(url).content.decode()
    assert "Final ranking" in page and "the private part" in page


@pytest.mark.both_kinds
def test_the_shake_up_compares_public_and_final_ranks(client, split_task, organiser):
    phase = split_task.current_phase()
    url = reverse("leaderboard:shake_up", args=[split_task.slug, phase.slug])
    assert client.get(url).status_code == 403, "a visitor waits for the close"
    client.force_login(organiser)
    assert client.get(url).status_code == 200
    client.logout()
    close(phase)
    response = client.get(url + "?metric=macro_f1")
    assert response.status_code == 200
    public = leaderboard(phase=phase, calibrated=False, part="public")
    final = leaderboard(phase=phase, calibrated=False, part="private")
    column = Column("macro_f1")
    for entry in final.entries:
        public_rank = next(e for e in public.entries if e.name == entry.name).ranks[column.id]
        row = next(r for r in response.context["rows"] if r.team == entry.name)
        assert (row.rank_before, row.rank_after) == (public_rank, entry.ranks[column.id])


@pytest.mark.both_kinds
def test_no_shake_up_without_a_split(client, task):
    url = reverse("leaderboard:shake_up", args=[task.slug, task.current_phase().slug])
    assert client.get(url).status_code == 404


def test_intervals_resample_the_part_the_board_shows(split_task, settings):
    settings.BOOTSTRAP_REPLICATES = 40
    phase = split_task.current_phase()
    derived.compute("intervals", phase.pk)
    row = PhaseStability.objects.get(phase=phase)
    public = part_masks(N_ITEMS, percent=40, seed=phase.split_seed_number)["public"]
    assert row.result["n_items"] == public.sum()
    order = sorted(phase.submissions.all(), key=lambda s: s.team_id)
    expected = bootstrap(
        GOLD_CODES[public],
        [s.item_predictions()[public] for s in order],
        labels=LABELS,
        replicates=40,
        seed=settings.BOOTSTRAP_SEED,
        columns=ranking_columns(LABELS, calibrated=None),
        heatmap=paired_columns(LABELS),
    )
    column = Column("macro_f1")
    for t, submission in enumerate(order):
        cell = row.result["intervals"]["raw"]["macro_f1"][str(submission.team_id)]
        assert cell["score"] == interval_json(expected.scores[expected.index(column), t])
