"""A task's community is its parent's for a subtask, reached only through ``Task.community``:
no relation back from a task to the rows of a community, and the organisers' decisions about
a subtask's runs, once recorded on the subtask, move to its parent with the rest."""

import django.db.models.deletion
from django.db import migrations, models


def decisions_to_the_parent(apps, schema_editor):
    Task = apps.get_model("leaderboard", "Task")
    OrganiserAction = apps.get_model("leaderboard", "OrganiserAction")
    for subtask_id, parent_id in Task.objects.filter(parent__isnull=False).values_list("pk", "parent_id"):
        OrganiserAction.objects.filter(task_id=subtask_id).update(task_id=parent_id)


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0024_task_scores_version'),
    ]

    operations = [
        migrations.RunPython(decisions_to_the_parent, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='announcement',
            name='task',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='leaderboard.task'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='task',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='leaderboard.task'),
        ),
        migrations.AlterField(
            model_name='organiseraction',
            name='task',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='leaderboard.task'),
        ),
        migrations.AlterField(
            model_name='participant',
            name='task',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='leaderboard.task'),
        ),
        migrations.AlterField(
            model_name='team',
            name='task',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='leaderboard.task'),
        ),
        migrations.AlterField(
            model_name='termsacceptance',
            name='task',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='leaderboard.task'),
        ),
    ]
