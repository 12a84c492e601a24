"""Load the demo: SemEval-2017 Task 4, divided into two subtasks with one registration and one
set of teams. Subtask A, in two phases, has eight teams that reproduce Table 8 of paper 000
(Opitz, *From Bias and Prevalence to Macro F1, Kappa, and MCC*) in its evaluation phase:

- **Development** (closed, public board, full feedback): its own smaller gold file of
  1,500 tweets; each team's predictions are drawn from its Table 8 matrix's per-class rates.
- **Evaluation** (closed; hidden until the close, so public now): the gold file has 12,284
  tweets' ids with 3,972 negative, 5,937 neutral and 2,375 positive labels; each team's
  prediction file is built item by item from its reconstructed confusion matrix
  (``leaderboard/demo_table8.py``).

Subtask B (two-way: negative or positive) is built from the same test tweets with the neutral
ones left out; each team's predictions there are its subtask A predictions with the neutral
ones decided at random, and teams A and C also mark a contrastive run (listed, never ranked).

A second task, of several labels an item (:mod:`leaderboard.demo_emotions`), has the form of
SemEval-2018 Task 1 E-c: which of 11 emotions a tweet expresses; its data and six teams' runs
are generated, and its pages say so.

Each phase has its data file (the ids to predict) and, as every phase, generated sample
submissions. Every file is uploaded through the same service as any upload, so it is validated
and scored like one. Re-running the command leaves an existing demo alone unless ``--reset`` is
given.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from leaderboard import demo_emotions, derived
from leaderboard.demo_table8 import GOLD_COUNTS, LABELS, MATRICES
from leaderboard.models import Phase, Task
from leaderboard.services import submissions as submission_service
from leaderboard.services import tasks as task_service
from leaderboard.services import teams as team_service
from scoring.engine.items import codes_with_matrix
from scoring.engine.schemes import LABEL_VALUES, Output

ROOT_SLUG = "semeval-2017-task-4"
SLUG = "semeval-2017-task-4a"
"""Subtask A, whose evaluation phase reproduces Table 8."""
SUBTASK_B_SLUG = "semeval-2017-task-4b"
EMOTIONS_SLUG = "semeval-2018-task-1-ec"
"""The multi-label task."""
B_LABELS = ("negative", "positive")
DEMO_PASSWORD = "demo-password"
SEED = 2017


EVALUATION = {"phase_name": "Evaluation", "phase_slug": "evaluation", "max_per_day": 10, "max_total": 100}
"""The one phase of subtask B and of the multi-label task (open while their runs come in)."""

DEV_ITEMS = 1500
"""Tweets in the development phase's gold file (the evaluation phase has Table 8's 12,284)."""


def demo_gold(rng: np.random.Generator, counts, prefix: str) -> tuple[list[str], np.ndarray]:
    """Ids and gold codes in a shuffled order, with ``counts`` items of each class."""
    codes = np.repeat(np.arange(len(LABELS)), counts)
    rng.shuffle(codes)
    ids = [f"{prefix}-{i:05d}" for i in range(1, len(codes) + 1)]
    return ids, codes


def dev_counts() -> list[int]:
    """The development set's class counts: the evaluation set's shares on :data:`DEV_ITEMS`."""
    total = sum(GOLD_COUNTS)
    counts = [round(DEV_ITEMS * count / total) for count in GOLD_COUNTS]
    counts[-1] += DEV_ITEMS - sum(counts)
    return counts


def predictions_for(matrix: tuple[tuple[int, ...], ...], gold: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Predicted codes such that the confusion matrix (rows predicted, columns gold) is ``matrix``."""
    return codes_with_matrix(matrix, gold, rng)


def predictions_like(matrix: tuple[tuple[int, ...], ...], gold: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Predicted codes for ``gold`` drawn with ``matrix``'s per-class rates (each gold column
    normalised): a team that behaves on other data as it did in Table 8."""
    rates = np.asarray(matrix, dtype=np.float64)
    rates /= rates.sum(axis=0, keepdims=True)
    return np.array([rng.choice(len(LABELS), p=rates[:, j]) for j in gold])


def as_csv(ids: list[str], codes: np.ndarray) -> bytes:
    lines = ["id,label", *(f"{i},{LABELS[c]}" for i, c in zip(ids, codes, strict=True))]
    return ("\n".join(lines) + "\n").encode()


DRAWN_RUNS = (
    "The teams' runs are not SemEval-2017's systems' outputs, which were not published: each run is drawn item by "
    "item from the team's published confusion matrix, so every score is the paper's, but which items a team got "
    "wrong, and so what the analysis finds the teams got wrong together (majority vote, oracle, kappa, hardest "
    "items) and the bootstrap intervals, describe these draws."
)
"""What the demo's phases say of their runs, on every page of item-level results (the analysis page)."""

CONTRASTIVE_TEAMS = ("A", "C")
"""The teams that also mark a contrastive run in subtask B."""


def polar_predictions(codes: np.ndarray, rng: np.random.Generator, neutral_as: str | None = None) -> np.ndarray:
    """Subtask A predictions (codes of :data:`LABELS`) as subtask B ones (codes of
    :data:`B_LABELS`): a neutral prediction becomes ``neutral_as``, or either class at random."""
    positive = codes == LABELS.index("positive")
    neutral = codes == LABELS.index("neutral")
    chosen = rng.random(len(codes)) < 0.5 if neutral_as is None else np.full(len(codes), neutral_as == "positive")
    return np.where(positive | (neutral & chosen), 1, 0)


def b_csv(ids: list[str], codes: np.ndarray) -> bytes:
    lines = ["id,label", *(f"{i},{B_LABELS[c]}" for i, c in zip(ids, codes, strict=True))]
    return ("\n".join(lines) + "\n").encode()


def ids_csv(ids: list[str]) -> bytes:
    """The data file of a phase: the ids to predict, without labels."""
    return ("\n".join(["id", *ids]) + "\n").encode()


class Command(BaseCommand):
    help = "Load the SemEval-2017 demo task whose teams reproduce Table 8 of Opitz 2024."

    def add_arguments(self, parser):
        parser.add_argument("--reset", action="store_true", help="delete and rebuild the demo task")

    def handle(self, *args, reset: bool = False, **options):
        existing = Task.objects.filter(slug__in=(ROOT_SLUG, SLUG, SUBTASK_B_SLUG, EMOTIONS_SLUG))
        if existing.exists() and not reset:
            self.stdout.write(f"The demo task exists already: /tasks/{ROOT_SLUG}/ (use --reset to rebuild it).")
            return
        # Each phase's derived results are computed once, here, after every run is scored, so
        # that the demo's first visitor finds them.
        with derived.asked_once(), transaction.atomic():
            existing.delete()
            root = self._load()
            emotions = self._emotions()
        for phase in [*root.every_phase(), *emotions.every_phase()]:
            derived.bring_up_to_date(phase=phase)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo loaded: /tasks/{ROOT_SLUG}/ with two subtasks and {len(MATRICES)} teams, "
                f"and the multi-label /tasks/{EMOTIONS_SLUG}/ with {len(demo_emotions.TEAMS)}."
            )
        )

    def _user(self, username: str):
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        return user

    def _load(self) -> Task:
        rng = np.random.default_rng(SEED)
        ids, gold = demo_gold(rng, GOLD_COUNTS, "tweet")
        dev_ids, dev_gold = demo_gold(rng, dev_counts(), "dev-tweet")
        now = timezone.now()
        dev_opens, dev_closes = now - dt.timedelta(days=60), now - dt.timedelta(days=30)
        eval_opens, eval_closes = now - dt.timedelta(days=21), now - dt.timedelta(days=7)
        organiser = self._user("organiser")
        root = task_service.task_with_subtasks_create(
            organiser=organiser,
            slug=ROOT_SLUG,
            title="SemEval-2017 Task 4: sentiment analysis in Twitter (demo)",
            description=(
                "SemEval-2017 Task 4 had five subtasks; this demo has two, with one registration and one set "
                "of teams. Subtask A reproduces the study of Opitz (From Bias and Prevalence to Macro F1, "
                "Kappa, and MCC): its evaluation phase has Table 8's eight teams. Subtask B asks for the "
                "polarity of the same test tweets without the neutral ones; there, teams A and C also marked "
                "a contrastive run, listed under them and never ranked."
            ),
        )
        task = task_service.task_create(
            organiser=organiser,
            parent=root,
            slug=SLUG,
            title="SemEval-2017 Task 4A: sentiment of tweets (demo)",
            description=(
                "Classify the sentiment of a tweet as negative, neutral or positive. This demo "
                "reconstructs the study of Opitz (From Bias and Prevalence to Macro F1, Kappa, and "
                "MCC, Appendix G): eight teams whose confusion matrices in the evaluation phase "
                "reproduce every column of its Table 8. The official ranking metric was macro recall. "
                "Both phases have closed: browse the boards, or log in as team-a to see a team's view."
            ),
            labels=list(LABELS),
            gold_name="semeval2017-task4a-dev-gold.csv",
            gold_content=as_csv(dev_ids, dev_gold),
            primary_metric="macro_recall",
            opens_at=dev_opens,
            closes_at=dev_closes,
            phase_name="Development",
            phase_slug="development",
            max_per_day=10,
            max_total=100,
        )
        # The boards rank overall too: each team's mean rank under Table 8's metrics.
        task_service.task_update(task=task, settings={"overall_method": "mean_rank", "overall_columns": "table8"})
        dev = task.phases.get()
        task_service.phase_update(
            phase=dev,
            settings={
                "description": "Practice on a development set of 1,500 tweets; the board is public throughout. "
                + f"{DRAWN_RUNS} Here each label is drawn with the per-class rates of the team's Table 8 matrix."
            },
        )
        # Teams can be formed until the last phase closes: the evaluation phase opens its
        # window to the future while the teams are made, then takes its true dates.
        evaluation = task_service.phase_create(
            task=task,
            name="Evaluation",
            slug="evaluation",
            description="The official test set of 12,284 tweets; results were hidden until the close. "
            + f"{DRAWN_RUNS} Here they are drawn so that each team's confusion matrix is exactly its Table 8 matrix.",
            gold_name="semeval2017-task4a-gold.csv",
            gold_content=as_csv(ids, gold),
            opens_at=eval_opens,
            closes_at=now + dt.timedelta(days=1),
            max_per_day=10,
            max_total=100,
            visibility=Phase.Visibility.AFTER_CLOSE,
        )
        task_service.phase_file_add(
            phase=dev, title="Development tweets to label (ids only)", name="dev-tweets.csv", content=ids_csv(dev_ids)
        )
        task_service.phase_file_add(
            phase=evaluation, title="Test tweets to label (ids only)", name="test-tweets.csv", content=ids_csv(ids)
        )
        polar = gold != LABELS.index("neutral")
        subtask_b, b_phase = self._subtask_b(root, organiser, ids, gold, polar, eval_opens, now)
        for name, matrix in MATRICES.items():
            user = self._user(f"team-{name.lower()}")
            team_service.team_create(task=task, user=user, name=f"Team {name}")
            predicted = predictions_for(matrix, gold, rng)
            submission_service.submission_create(
                task=task,
                phase=dev,
                user=user,
                name=f"team-{name.lower()}-dev.csv",
                content=as_csv(dev_ids, predictions_like(matrix, dev_gold, rng)),
                now=dev_opens + dt.timedelta(days=7),
            )
            submission_service.submission_create(
                task=task,
                phase=evaluation,
                user=user,
                name=f"team-{name.lower()}.csv",
                content=as_csv(ids, predicted),
                now=eval_opens + dt.timedelta(days=7),
            )
            runs = [("primary", polar_predictions(predicted[polar], rng))]
            if name in CONTRASTIVE_TEAMS:  # neutral read as positive: a second system to compare
                runs.append(("contrastive-1", polar_predictions(predicted[polar], rng, neutral_as="positive")))
            for mark, codes in runs:
                submission_service.submission_create(
                    task=subtask_b,
                    phase=b_phase,
                    user=user,
                    name=f"team-{name.lower()}-4b-{mark}.csv",
                    content=b_csv([i for i, keep in zip(ids, polar, strict=True) if keep], codes),
                    now=eval_opens + dt.timedelta(days=8),
                    mark=mark,
                )
        task_service.phase_update(phase=evaluation, settings={"closes_at": eval_closes})
        task_service.phase_update(phase=b_phase, settings={"closes_at": eval_closes})
        return root

    def _emotions(self) -> Task:
        """The multi-label task (:mod:`leaderboard.demo_emotions`): one closed phase, public."""
        rng = np.random.default_rng(SEED + 1)
        codes = demo_emotions.gold(rng)
        ids = [f"ec-tweet-{i:05d}" for i in range(1, len(codes) + 1)]
        now = timezone.now()
        opens_at, closes_at = now - dt.timedelta(days=20), now - dt.timedelta(days=6)
        task = task_service.task_create(
            organiser=self._user("organiser"),
            slug=EMOTIONS_SLUG,
            title="SemEval-2018 Task 1 E-c: emotions of tweets (demo, generated data)",
            description=demo_emotions.DESCRIPTION,
            outputs=tuple(Output(emotion, LABEL_VALUES) for emotion in demo_emotions.EMOTIONS),
            gold_name="semeval2018-task1-ec-gold.csv",
            gold_content=demo_emotions.as_csv(ids, codes),
            primary_metric="jaccard",
            opens_at=opens_at,
            closes_at=now + dt.timedelta(days=1),
            **EVALUATION,
        )
        phase = task.phases.get()
        task_service.phase_file_add(
            phase=phase, title="Test tweets to label (ids only)", name="ec-test-tweets.csv", content=ids_csv(ids)
        )
        for name in demo_emotions.TEAMS:
            user = self._user(f"team-{name.lower()}")
            team_service.team_create(task=task, user=user, name=f"Team {name}")
            submission_service.submission_create(
                task=task,
                phase=phase,
                user=user,
                name=f"team-{name.lower()}-ec.csv",
                content=demo_emotions.as_csv(ids, demo_emotions.run(codes, name, rng)),
                now=opens_at + dt.timedelta(days=5),
            )
        task_service.phase_update(
            phase=phase,
            settings={
                "closes_at": closes_at,
                "description": demo_emotions.PHASE_DESCRIPTION.format(n=len(codes)),
            },
        )
        return task

    def _subtask_b(self, root, organiser, ids, gold, polar, opens_at, now):
        """Subtask B: the test tweets that are not neutral, negative or positive; one phase that
        takes a primary run and a contrastive one per team."""
        b_gold = np.where(gold[polar] == LABELS.index("positive"), 1, 0)
        b_ids = [i for i, keep in zip(ids, polar, strict=True) if keep]
        subtask = task_service.task_create(
            organiser=organiser,
            parent=root,
            slug=SUBTASK_B_SLUG,
            title="SemEval-2017 Task 4B: negative or positive? (demo)",
            description=(
                "The test tweets of subtask A that are negative or positive: say which. Teams mark one primary "
                "run, ranked, and may add one contrastive run, listed under them and never ranked. SemEval-2017 "
                "ranked subtask B by the recall averaged over the two classes."
            ),
            labels=list(B_LABELS),
            gold_name="semeval2017-task4b-gold.csv",
            gold_content=b_csv(b_ids, b_gold),
            primary_metric="macro_recall",
            opens_at=opens_at,
            closes_at=now + dt.timedelta(days=1),
            **EVALUATION,
            counting=Phase.Counting.CHOSEN,
            contrastive_runs=1,
        )
        phase = subtask.phases.get()
        task_service.phase_update(
            phase=phase,
            settings={"description": f"{DRAWN_RUNS} Here a team's neutral labels of subtask A became either class."},
        )
        task_service.phase_file_add(
            phase=phase, title="Test tweets to label (ids only)", name="test-tweets-4b.csv", content=ids_csv(b_ids)
        )
        return subtask, phase
