"""``collectstatic`` compresses a file once (leaderboard/static_storage.py): a second run keeps the
Brotli and gzip copies of an unchanged file, a copy that does not give the file's bytes is
written again, and a changed file (a new hashed name) is compressed."""

from __future__ import annotations

import brotli
import pytest
from django.core.management import call_command
from whitenoise.compress import Compressor

SCRIPT = "/* the site's script */\n" + "const value = 'a fairly repetitive line of script';\n" * 200


@pytest.fixture
def collect(settings, tmp_path, monkeypatch):
    source, root = tmp_path / "static", tmp_path / "collected"
    source.mkdir()
    (source / "site.js").write_text(SCRIPT)
    settings.STATICFILES_DIRS = [source]
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.STATIC_ROOT = root
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "leaderboard.static_storage.CompressedOnceStorage"},
    }
    compressed: list[str] = []
    compress = Compressor.compress
    monkeypatch.setattr(Compressor, "compress", lambda self, path: compressed.append(path) or compress(self, path))

    def run() -> list[str]:
        compressed.clear()
        call_command("collectstatic", interactive=False, verbosity=0)
        return sorted(path.removeprefix(str(root) + "/") for path in compressed)

    return run, source, root


def test_an_unchanged_file_is_compressed_once(collect):
    run, source, root = collect
    (first,) = run()
    assert first.startswith("site.") and first.endswith(".js")
    assert brotli.decompress((root / f"{first}.br").read_bytes()).decode() == SCRIPT
    assert run() == []  # started again on the same files

    (root / f"{first}.br").write_bytes(b"cut short")
    assert run() == [first]  # a copy that does not give the file is written again
    assert brotli.decompress((root / f"{first}.br").read_bytes()).decode() == SCRIPT

    (source / "site.js").write_text(SCRIPT + "const more = 1;\n")
    (changed,) = run()
    assert changed != first and changed.startswith("site.")
