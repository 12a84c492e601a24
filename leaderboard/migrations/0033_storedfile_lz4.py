"""On PostgreSQL, stored files are compressed with LZ4 instead of pglz: a 250 KB prediction file
took the server 3.2 ms of CPU to store with pglz and 0.7 ms with LZ4, for a fifth more room
(benchmarks/README.md, the deadline rush). Files stored before keep their compression. A server
without LZ4 (built without it, or older than PostgreSQL 14) keeps pglz; SQLite stores files as
they are."""

from django.db import DatabaseError, migrations, transaction

TABLE = "leaderboard_storedfile"


def lz4(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    try:
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN content SET COMPRESSION lz4")
    except DatabaseError:
        pass  # no LZ4 on this server: pglz, as before


def pglz(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN content SET COMPRESSION pglz")


class Migration(migrations.Migration):
    dependencies = [("leaderboard", "0032_submission_counting_index")]

    operations = [migrations.RunPython(lz4, pglz)]
