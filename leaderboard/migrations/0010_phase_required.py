import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Submissions and baselines now always belong to a phase; the settings that moved to the
    phase leave the task, and the chosen submission is a mark on the submission itself."""

    dependencies = [
        ("leaderboard", "0009_one_phase_per_task"),
    ]

    operations = [
        migrations.AlterField(
            model_name="submission",
            name="phase",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="submissions", to="leaderboard.phase"
            ),
        ),
        migrations.RemoveConstraint(model_name="baseline", name="one_baseline_per_kind"),
        migrations.RemoveField(model_name="baseline", name="task"),
        migrations.AlterField(
            model_name="baseline",
            name="phase",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="baselines", to="leaderboard.phase"
            ),
        ),
        migrations.AddConstraint(
            model_name="baseline",
            constraint=models.UniqueConstraint(fields=("phase", "kind"), name="one_baseline_per_kind_in_phase"),
        ),
        migrations.AddConstraint(
            model_name="submission",
            constraint=models.UniqueConstraint(
                condition=models.Q(("chosen", True)),
                fields=("team", "phase"),
                name="one_chosen_submission_per_phase",
            ),
        ),
        migrations.RemoveField(model_name="team", name="chosen_submission"),
        migrations.RemoveConstraint(model_name="task", name="task_closes_after_opening"),
        migrations.AlterModelOptions(name="task", options={"ordering": ["-created_at", "title"]}),
        migrations.RemoveField(model_name="task", name="gold_file"),
        migrations.RemoveField(model_name="task", name="gold_version"),
        migrations.RemoveField(model_name="task", name="pending_gold_file"),
        migrations.RemoveField(model_name="task", name="opens_at"),
        migrations.RemoveField(model_name="task", name="closes_at"),
        migrations.RemoveField(model_name="task", name="max_per_day"),
        migrations.RemoveField(model_name="task", name="max_total"),
        migrations.RemoveField(model_name="task", name="counting"),
        migrations.RemoveField(model_name="task", name="visibility"),
        migrations.RemoveField(model_name="task", name="feedback"),
    ]
