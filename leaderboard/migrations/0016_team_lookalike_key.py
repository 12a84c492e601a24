from django.db import migrations, models

from leaderboard.names import lookalike_key


def fill_lookalike_keys(apps, schema_editor):
    """Each team's confusable skeleton; a team whose name looks like an earlier team's of the
    same task (allowed before) keeps its name, with its id in its key so that both stay."""
    Team = apps.get_model("leaderboard", "Team")
    seen = set()
    for team in Team.objects.order_by("task_id", "created_at", "pk"):
        key = lookalike_key(team.name)
        if (team.task_id, key) in seen:
            key = f"{key}#{team.pk}"
        seen.add((team.task_id, key))
        Team.objects.filter(pk=team.pk).update(lookalike_key=key)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0015_sent_mail"),
    ]

    operations = [
        migrations.AddField(
            model_name="team",
            name="lookalike_key",
            field=models.CharField(
                default="",
                editable=False,
                help_text="the name's confusable skeleton, also unique in the task",
                max_length=240,
            ),
            preserve_default=False,
        ),
        migrations.RunPython(fill_lookalike_keys, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="team",
            constraint=models.UniqueConstraint(fields=("task", "lookalike_key"), name="team_lookalike_unique_in_task"),
        ),
    ]
