import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    """Phases, their data files, and the columns that tie submissions and baselines to a phase
    (filled by 0009 before 0010 makes them required)."""

    dependencies = [
        ("leaderboard", "0007_organiser_actions"),
    ]

    operations = [
        migrations.CreateModel(
            name="Phase",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("slug", models.SlugField(max_length=40)),
                ("name", models.CharField(max_length=80)),
                (
                    "description",
                    models.TextField(blank=True, help_text="what this phase is for, shown on the task page"),
                ),
                (
                    "gold_version",
                    models.PositiveIntegerField(default=1, help_text="increases when the gold file is replaced"),
                ),
                ("opens_at", models.DateTimeField()),
                ("closes_at", models.DateTimeField()),
                (
                    "max_per_day",
                    models.PositiveIntegerField(default=5, help_text="submissions per team per UTC day"),
                ),
                ("max_total", models.PositiveIntegerField(default=100, help_text="submissions per team in all")),
                (
                    "counting",
                    models.CharField(
                        choices=[
                            ("latest", "the latest scored submission"),
                            ("best", "the best scored submission under the primary metric"),
                            ("chosen", "the submission the team chose (else the latest)"),
                        ],
                        default="latest",
                        max_length=10,
                    ),
                ),
                (
                    "visibility",
                    models.CharField(
                        choices=[
                            ("public", "public while the phase runs"),
                            ("after_close", "hidden until the phase closes"),
                        ],
                        default="public",
                        max_length=12,
                    ),
                ),
                (
                    "feedback",
                    models.CharField(
                        choices=[
                            ("full", "full: every score of its own submissions"),
                            ("primary", "the primary score only, rounded"),
                            ("validated", "validated only: the file was valid and has been scored"),
                        ],
                        default="full",
                        help_text="what a team sees of its own submissions while results are hidden; once they are "
                        "public, everything. Confusion matrices and per-class counts are never shown while results "
                        "are hidden.",
                        max_length=10,
                    ),
                ),
                (
                    "gold_file",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to="leaderboard.storedfile"
                    ),
                ),
                (
                    "pending_gold_file",
                    models.ForeignKey(
                        blank=True,
                        help_text="a new gold file uploaded and previewed, waiting for the organiser's confirmation",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="leaderboard.storedfile",
                    ),
                ),
                (
                    "task",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="phases", to="leaderboard.task"
                    ),
                ),
            ],
            options={
                "ordering": ["task", "opens_at"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("closes_at__gt", models.F("opens_at"))),
                        name="phase_closes_after_opening",
                        violation_error_code="BAD_DATES",
                        violation_error_message="A phase must close after it opens.",
                    ),
                    models.UniqueConstraint(fields=("task", "slug"), name="phase_slug_unique_in_task"),
                ],
            },
        ),
        migrations.CreateModel(
            name="PhaseFile",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "title",
                    models.CharField(help_text='what the file is, e.g. "test inputs (no labels)"', max_length=120),
                ),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "file",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to="leaderboard.storedfile"
                    ),
                ),
                (
                    "phase",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="data_files",
                        to="leaderboard.phase",
                    ),
                ),
            ],
            options={"ordering": ["phase", "created_at", "id"]},
        ),
        migrations.AddField(
            model_name="submission",
            name="phase",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="submissions",
                to="leaderboard.phase",
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="chosen",
            field=models.BooleanField(default=False, help_text="the team chose it to count in its phase"),
        ),
        migrations.AddField(
            model_name="baseline",
            name="phase",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="baselines",
                to="leaderboard.phase",
            ),
        ),
    ]
