"""Pack the scores of every scored row for the boards (values and confusion matrices): rows
scored before the board read packed values would otherwise be read from their JSON on every
board, which is exact but slow at thousands of teams."""

from django.db import migrations

BATCH = 500


def pack_scored_rows(apps, schema_editor):
    from leaderboard.models import packed_scores  # a function of the row's fields only

    for name in ("Submission", "Baseline"):
        model = apps.get_model("leaderboard", name)
        rows = model.objects.filter(confusion_matrix__isnull=False).select_related("phase__task").order_by("pk")
        batch = []
        for row in rows.iterator(chunk_size=BATCH):
            row.board_values, row.board_layout = packed_scores(row, row.phase.task.labels)
            batch.append(row)
            if len(batch) == BATCH:
                model.objects.bulk_update(batch, ["board_values", "board_layout"])
                batch = []
        model.objects.bulk_update(batch, ["board_values", "board_layout"])


class Migration(migrations.Migration):
    dependencies = [("leaderboard", "0018_board_values")]

    operations = [migrations.RunPython(pack_scored_rows, migrations.RunPython.noop, elidable=True)]
