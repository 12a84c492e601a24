"""Load the demo: a SemEval-2017 Task 4A-like task whose eight teams reproduce Table 8 of
paper 000 (Opitz, *From Bias and Prevalence to Macro F1, Kappa, and MCC*).

The gold file has 12,284 tweets' ids with 3,972 negative, 5,937 neutral and 2,375 positive
labels; each team's prediction file is built item by item from its reconstructed confusion
matrix (``leaderboard/demo_table8.py``) and uploaded through the same service as any upload,
so it is validated and scored like one. Re-running the command leaves an existing demo alone
unless ``--reset`` is given.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from leaderboard import services
from leaderboard.demo_table8 import GOLD_COUNTS, LABELS, MATRICES
from leaderboard.models import Task

SLUG = "semeval-2017-task-4a"
DEMO_PASSWORD = "demo-password"
SEED = 2017


def demo_gold(rng: np.random.Generator) -> tuple[list[str], np.ndarray]:
    """Ids and gold codes in a shuffled order, with Table 8's class counts."""
    codes = np.repeat(np.arange(len(LABELS)), GOLD_COUNTS)
    rng.shuffle(codes)
    ids = [f"tweet-{i:05d}" for i in range(1, len(codes) + 1)]
    return ids, codes


def predictions_for(matrix: tuple[tuple[int, ...], ...], gold: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Predicted codes such that the confusion matrix (rows predicted, columns gold) is ``matrix``."""
    predicted = np.empty_like(gold)
    for j in range(len(LABELS)):
        items = np.flatnonzero(gold == j)
        column = np.repeat(np.arange(len(LABELS)), [row[j] for row in matrix])
        if len(column) != len(items):
            raise ValueError(f"column {j} of a demo matrix sums to {len(column)}, not {len(items)}")
        predicted[items] = rng.permutation(column)
    return predicted


def as_csv(ids: list[str], codes: np.ndarray) -> bytes:
    lines = ["id,label", *(f"{i},{LABELS[c]}" for i, c in zip(ids, codes, strict=True))]
    return ("\n".join(lines) + "\n").encode()


class Command(BaseCommand):
    help = "Load the SemEval-2017 demo task whose teams reproduce Table 8 of Opitz 2024."

    def add_arguments(self, parser):
        parser.add_argument("--reset", action="store_true", help="delete and rebuild the demo task")

    def handle(self, *args, reset: bool = False, **options):
        existing = Task.objects.filter(slug=SLUG).first()
        if existing and not reset:
            self.stdout.write(f"The demo task exists already: /tasks/{SLUG}/ (use --reset to rebuild it).")
            return
        with transaction.atomic():
            if existing:
                existing.delete()
            self._load()
        self.stdout.write(self.style.SUCCESS(f"Demo loaded: /tasks/{SLUG}/ with {len(MATRICES)} teams."))

    def _user(self, username: str):
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        return user

    def _load(self) -> None:
        rng = np.random.default_rng(SEED)
        ids, gold = demo_gold(rng)
        now = timezone.now()
        task = services.task_create(
            organiser=self._user("organiser"),
            slug=SLUG,
            title="SemEval-2017 Task 4A: sentiment of tweets (demo)",
            description=(
                "Classify the sentiment of a tweet as negative, neutral or positive. This demo "
                "reconstructs the study of Opitz (From Bias and Prevalence to Macro F1, Kappa, and "
                "MCC, Appendix G): eight teams whose confusion matrices reproduce every column of "
                "its Table 8. The official ranking metric was macro recall. Sign up, form a team "
                "and upload a prediction file to join them."
            ),
            labels=list(LABELS),
            gold_name="semeval2017-task4a-gold.csv",
            gold_content=as_csv(ids, gold),
            primary_metric="macro_recall",
            opens_at=now - dt.timedelta(days=7),
            closes_at=now + dt.timedelta(days=60),
            max_per_day=10,
            max_total=100,
        )
        for name, matrix in MATRICES.items():
            user = self._user(f"team-{name.lower()}")
            services.team_create(task=task, user=user, name=f"Team {name}")
            content = as_csv(ids, predictions_for(matrix, gold, rng))
            services.submission_create(task=task, user=user, name=f"team-{name.lower()}.csv", content=content)
        sample_dir = Path(settings.VAR_DIR) / "demo"
        sample_dir.mkdir(parents=True, exist_ok=True)
        sample = rng.integers(0, len(LABELS), size=len(ids))
        (sample_dir / "sample-predictions.csv").write_bytes(as_csv(ids, sample))
        self.stdout.write(f"A sample prediction file to upload: {sample_dir / 'sample-predictions.csv'}")
