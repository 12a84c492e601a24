"""Stored files on PostgreSQL: compressed with LZ4 (migration 0033), and read back as stored."""

from __future__ import annotations

import pytest
from django.db import connection

from leaderboard.models import StoredFile

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def test_a_stored_file_is_compressed_with_lz4_and_read_back_whole():
    content = b"id,label\n" + b"".join(b"item-%07d,positive\n" % n for n in range(20_000))
    stored = StoredFile.of(name="run.csv", content=content)
    stored.save()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_compression(content), pg_column_size(content) FROM leaderboard_storedfile WHERE id = %s",
            [stored.pk],
        )
        method, size = cursor.fetchone()
    assert method == "lz4"
    assert size < len(content) / 4  # compressed, not stored as it is
    assert bytes(StoredFile.objects.get(pk=stored.pk).content) == content
