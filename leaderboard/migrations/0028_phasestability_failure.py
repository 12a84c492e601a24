"""Why the last computation of a phase's intervals failed, and for which scores: the pages show
the previous intervals as stale with the reason, and the recovery sweep does not try the same
scores again."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0027_phase_analysis"),
    ]

    operations = [
        migrations.AddField(
            model_name="phasestability",
            name="failed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="phasestability",
            name="failed_stamp",
            field=models.CharField(
                blank=True, help_text="digest of the scores the last failed computation was asked for", max_length=64
            ),
        ),
        migrations.AddField(
            model_name="phasestability",
            name="failure",
            field=models.CharField(
                blank=True, help_text="why the last computation failed; empty once one succeeds", max_length=200
            ),
        ),
    ]
