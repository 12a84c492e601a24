"""A bundle's zip is checked as strictly as an upload before anything in it is read.

What this proves: each hostile zip is refused with its named problem and the offending path —
a path that climbs out (``../``), an absolute path, a drive, a backslash, a symbolic link, the
same path twice, a file that expands too many times (a zip bomb by ratio), files that come to
too much once expanded (by total size), too many files, a file above an upload's size, a
header that lies about the size, bytes that are not a zip; archivers' litter is passed over,
and a bundle inside one folder is read from that folder.
"""

from __future__ import annotations

import io
import struct
import zipfile

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings

from leaderboard import errors
from leaderboard.bundles.zips import SafeZip
from tests.leaderboard.bundles.support import streamed_zip, zip_of


def refusal(content: bytes) -> tuple[set[str], str]:
    with pytest.raises(ValidationError) as caught:
        SafeZip(content, name="bundle.zip")
    return errors.problem_codes(caught.value), " ".join(caught.value.messages)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../evil.txt", "climbs out of the bundle"),
        ("phases/../../evil.txt", "climbs out of the bundle"),
        ("/etc/passwd", "is absolute"),
        ("C:/Windows/evil.dll", "names a drive"),
        ("a\\..\\evil.txt", "holds a backslash"),
        ("a\x1b[31mb", "holds a control character"),
        ("a//b", "has an empty folder name"),
    ],
)
def test_a_path_out_of_the_bundle_is_refused(path, why):
    codes, message = refusal(zip_of({"task.yaml": b"x", path: b"evil"}))
    assert codes == {errors.BUNDLE_UNSAFE_PATH.code}
    assert why in message and repr(path) in message and message.startswith("bundle.zip: ")


def test_a_symbolic_link_is_refused():
    codes, message = refusal(zip_of({"task.yaml": b"x"}, links=("phases/gold.csv",)))
    assert codes == {errors.BUNDLE_LINK.code} and "'phases/gold.csv' is a symbolic link" in message


def test_a_path_twice_is_refused():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr("task.yaml", b"a")
        archive.writestr("task.yaml", b"b")
    codes, _ = refusal(out.getvalue())
    assert codes == {errors.BUNDLE_DUPLICATE.code}


def test_a_zip_bomb_by_ratio_is_refused():
    bomb = zip_of({"task.yaml": b"x", "phases/gold.csv": b"\0" * (20 * 1024 * 1024)})
    assert len(bomb) < 100_000
    codes, message = refusal(bomb)
    assert codes == {errors.BUNDLE_RATIO.code} and "'phases/gold.csv' expands 1,0" in message


@override_settings(BUNDLE_MAX_EXPANDED_BYTES=3_000_000)
def test_a_zip_bomb_by_total_size_is_refused():
    text = bytes(range(32, 127)) * 11_000  # about 1 MB each, expanding little
    codes, message = refusal(zip_of({f"part-{n}.txt": text for n in range(4)}))
    assert codes == {errors.BUNDLE_EXPANDED_TOO_LARGE.code} and "the limit is 3,000,000" in message


@override_settings(BUNDLE_MAX_FILES=3)
def test_too_many_files_are_refused():
    codes, _ = refusal(zip_of({f"f{n}": b"x" for n in range(4)}))
    assert codes == {errors.BUNDLE_TOO_MANY_FILES.code}


@override_settings(MAX_UPLOAD_BYTES=1000)
def test_a_file_above_an_uploads_size_is_refused():
    codes, message = refusal(zip_of({"gold.csv": bytes(range(256)) * 8}))
    assert codes == {errors.BUNDLE_ENTRY_TOO_LARGE.code} and "2,048 bytes" in message


@override_settings(BUNDLE_MAX_BYTES=100)
def test_a_bundle_above_its_size_is_refused():
    codes, _ = refusal(zip_of({"task.yaml": bytes(range(256))}))
    assert codes == {errors.BUNDLE_TOO_LARGE.code}


def test_not_a_zip_is_refused():
    codes, message = refusal(b"PK\x03\x04 not a zip at all" * 10)
    assert codes == {errors.BUNDLE_NOT_ZIP.code} and "bundle.zip is not a zip archive" in message


def test_a_header_that_lies_about_the_size_is_caught_when_read():
    content = bytearray(zip_of({"gold.csv": b"id,label\n" + b"1,a\n" * 500}))
    # The central directory's uncompressed size (offset 24 of its record) says 10 bytes.
    record = content.rindex(b"PK\x01\x02")
    content[record + 24 : record + 28] = struct.pack("<I", 10)
    bundle = SafeZip(bytes(content), name="bundle.zip")
    with pytest.raises(ValidationError) as caught:
        bundle.read("gold.csv")
    assert errors.problem_codes(caught.value) == {errors.BUNDLE_ENTRY_DAMAGED.code}


def test_litter_is_passed_over_and_a_top_folder_is_found():
    bundle = SafeZip(
        streamed_zip({"x/task.yaml": b"a", "x/.DS_Store": b"", "__MACOSX/x/._task.yaml": b"", "x/p/f.csv": b"1"}),
        name="bundle.zip",
    )
    assert sorted(bundle.files) == ["x/p/f.csv", "x/task.yaml"]
    assert bundle.top_folder() == "x"
    bundle.root = "x"
    assert bundle.has("task.yaml") and bundle.read("p/f.csv") == b"1" and bundle.under("p") == ["p/f.csv"]
