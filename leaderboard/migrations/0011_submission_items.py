"""Per-item predictions with each submission's scores, and a phase's bootstrap intervals.

Submissions scored before this migration have no items: they get them the next time they are
scored, or when the intervals are first computed (leaderboard.stability reads their stored file
once, against the gold version they were scored at, and keeps the items if they give the
stored confusion matrix exactly)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0010_phase_required"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="items",
            field=models.BinaryField(
                blank=True,
                editable=False,
                help_text="per-item predictions in the gold file's order at the scored gold version (class codes or "
                "probability rows, compressed: scoring.engine.items), written with the scores; what a paired "
                "bootstrap resamples. Empty for submissions scored before they were kept.",
                null=True,
            ),
        ),
        migrations.CreateModel(
            name="PhaseStability",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "stamp",
                    models.CharField(
                        blank=True,
                        help_text="digest of the scores the result was computed from (leaderboard.caching)",
                        max_length=64,
                    ),
                ),
                (
                    "result",
                    models.JSONField(
                        blank=True, help_text="intervals in the layout of the CLI's board JSON", null=True
                    ),
                ),
                ("replicates", models.PositiveIntegerField(default=0)),
                ("seed", models.BigIntegerField(default=0)),
                ("computed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "requested_at",
                    models.DateTimeField(
                        blank=True,
                        help_text="when a computation was last handed to the queue; cleared when it ends",
                        null=True,
                    ),
                ),
                (
                    "phase",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="stability",
                        to="leaderboard.phase",
                    ),
                ),
            ],
        ),
    ]
