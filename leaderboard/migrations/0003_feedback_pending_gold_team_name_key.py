import unicodedata

import django.db.models.deletion
from django.db import migrations, models


def name_key(name: str) -> str:
    # As leaderboard.names.name_key at the time of this migration.
    return unicodedata.normalize("NFKC", " ".join(unicodedata.normalize("NFKC", name).split()).casefold())


def fill(apps, schema_editor):
    Task = apps.get_model("leaderboard", "Task")
    Team = apps.get_model("leaderboard", "Team")
    Task.objects.filter(visibility="after_close").update(feedback="validated")
    for team in Team.objects.all():
        team.name_key = name_key(team.name)
        team.save(update_fields=["name_key"])


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0002_task_dates_message"),
    ]

    operations = [
        migrations.AddField(
            model_name="task",
            name="feedback",
            field=models.CharField(
                choices=[
                    ("full", "full: every score of its own submissions"),
                    ("primary", "the primary score only, rounded"),
                    ("validated", "validated only: the file was valid and has been scored"),
                ],
                default="full",
                help_text="what a team sees of its own submissions while results are hidden; once they are public, "
                "everything. Confusion matrices and per-class counts are never shown while results are hidden.",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="task",
            name="pending_gold_file",
            field=models.ForeignKey(
                blank=True,
                help_text="a new gold file uploaded and previewed, waiting for the organiser's confirmation",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="leaderboard.storedfile",
            ),
        ),
        migrations.AddField(
            model_name="team",
            name="name_key",
            field=models.CharField(
                default="", editable=False, help_text="the name as compared for uniqueness", max_length=80
            ),
            preserve_default=False,
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.RemoveConstraint(model_name="team", name="team_name_unique_in_task"),
        migrations.AddConstraint(
            model_name="team",
            constraint=models.UniqueConstraint(fields=("task", "name_key"), name="team_name_key_unique_in_task"),
        ),
    ]
