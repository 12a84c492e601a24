from django.db import migrations

PHASE_FIELDS = (
    "gold_file_id",
    "gold_version",
    "pending_gold_file_id",
    "opens_at",
    "closes_at",
    "max_per_day",
    "max_total",
    "counting",
    "visibility",
    "feedback",
)


def one_phase_per_task(apps, schema_editor):
    """Every existing task becomes a task with one phase, "Evaluation", holding its gold file,
    dates, limits and policies; its submissions and baselines move into that phase, and each
    team's chosen submission is marked as chosen."""
    Task = apps.get_model("leaderboard", "Task")
    Phase = apps.get_model("leaderboard", "Phase")
    Submission = apps.get_model("leaderboard", "Submission")
    Baseline = apps.get_model("leaderboard", "Baseline")
    Team = apps.get_model("leaderboard", "Team")
    for task in Task.objects.all():
        phase = Phase.objects.create(
            task=task, slug="evaluation", name="Evaluation", **{name: getattr(task, name) for name in PHASE_FIELDS}
        )
        Submission.objects.filter(task=task).update(phase=phase)
        Baseline.objects.filter(task=task).update(phase=phase)
    chosen = Team.objects.exclude(chosen_submission=None).values_list("chosen_submission_id", flat=True)
    Submission.objects.filter(pk__in=list(chosen)).update(chosen=True)


def back_to_the_task(apps, schema_editor):
    """The reverse: each task takes back the settings of its latest phase, and each team the
    submission it chose there (the phases themselves go with 0008's reverse)."""
    Phase = apps.get_model("leaderboard", "Phase")
    Submission = apps.get_model("leaderboard", "Submission")
    Team = apps.get_model("leaderboard", "Team")
    for phase in Phase.objects.order_by("task", "opens_at"):  # the latest phase of a task is saved last
        phase.task.__dict__.update({name: getattr(phase, name) for name in PHASE_FIELDS})
        phase.task.save()
    for submission in Submission.objects.filter(chosen=True).order_by("phase__opens_at"):
        Team.objects.filter(pk=submission.team_id).update(chosen_submission=submission)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0008_phases"),
    ]

    operations = [migrations.RunPython(one_phase_per_task, back_to_the_task)]
