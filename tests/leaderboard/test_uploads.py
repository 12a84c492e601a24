"""Uploads whose header is hostile or odd, through the service and the upload view.

What this proves, end to end (``submission_create`` and the page that takes a file):
a header of a million fields is refused with a line-1 message before pandas parses the file;
tasks whose labels look like header names (``label``, ``ID``, ``x]``, ``two words``, ``id``)
take hard and probability files alike, and the one ambiguous header is refused by name; blank
lines before the header are skipped and errors still name the file's own lines; probability
rows that sum to 0.999 are renormalised, so the stored matrix holds one item per row.
"""

from __future__ import annotations

import pandas as pd
import pyarrow.csv as pa_csv
import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from leaderboard.models import StoredFile, Submission, Task
from leaderboard.services.submissions import submission_create
from leaderboard.services.teams import team_create
from scoring.engine import io
from tests.conftest import GOLD, PERFECT

pytestmark = pytest.mark.django_db

ODD_LABELS = ["label", "ID", "x]", "two words"]
ODD_GOLD_LABELS = ["label", "ID", "x]", "two words", "label", "ID", "x]", "label"]
IDS = [str(k) for k in range(1, 9)]
WIDE = 1_000_000


def stored_counts() -> tuple[int, int]:
    return StoredFile.objects.count(), Submission.objects.count()


def label_file(labels: list[str], ids: list[str] = IDS) -> bytes:
    return ("id,label\n" + "".join(f"{i},{label}\n" for i, label in zip(ids, labels, strict=True))).encode()


def one_hot_file(header: list[str], id_column: str, gold: list[str], ids: list[str] = IDS) -> bytes:
    """Probability 1 on each item's gold label, in the header's column order."""
    names = [name.strip() for name in header]
    rows = [
        ",".join(item if name == id_column.strip() else str(int(name == label)) for name in names)
        for item, label in zip(ids, gold, strict=True)
    ]
    return (",".join(header) + "\n" + "\n".join(rows) + "\n").encode()


@pytest.fixture
def upload(django_capture_on_commit_callbacks):
    """Upload through the service and score at commit: the scored submission, or the
    ``ValidationError`` of a refusal (which must have stored nothing)."""

    def run(task: Task, user, content: bytes) -> Submission | ValidationError:
        before = stored_counts()
        try:
            with django_capture_on_commit_callbacks(execute=True):
                submission = submission_create(task=task, user=user, name="run.csv", content=content)
        except ValidationError as error:
            assert stored_counts() == before, "a refused upload left rows behind"
            return error
        submission.refresh_from_db()
        assert submission.status == Submission.Status.SCORED, submission.failure
        return submission

    return run


def refusal(result: object) -> tuple[str, str]:
    """The (code, message) of the one problem a refused upload names."""
    assert isinstance(result, ValidationError), f"expected a refusal, got {result!r}"
    [item] = [item for items in result.update_error_dict({}).values() for item in items]
    return item.code, item.message


def member_of(task: Task, make_user, name: str):
    user = make_user(f"{name}-member")
    team_create(task=task, user=user, name=name)
    return user


@pytest.fixture
def odd_task(make_task, make_user) -> tuple[Task, object]:
    task = make_task("odd", labels=ODD_LABELS, gold=label_file(ODD_GOLD_LABELS))
    return task, member_of(task, make_user, "Odd")


@pytest.fixture
def toy(task, make_user) -> tuple[Task, object]:
    return task, member_of(task, make_user, "Toy")


# --- a million header fields ---------------------------------------------------------------


def test_a_header_of_a_million_fields_is_refused_before_any_reader_parses_it(toy, upload, monkeypatch):
    task, user = toy
    wide = ("id," + ",".join(f"c{k}" for k in range(WIDE)) + "\n").encode() + PERFECT.split(b"\n", 1)[1]
    parsed: list[bytes] = []
    pandas_read, arrow_read = pd.read_csv, pa_csv.read_csv

    def pandas_spy(source, *args, **kwargs):
        parsed.append(source.getvalue()[:16])
        return pandas_read(source, *args, **kwargs)

    def arrow_spy(source, *args, **kwargs):  # Arrow is given the data lines, after the header
        parsed.append(source.to_pybytes()[:16])
        return arrow_read(source, *args, **kwargs)

    monkeypatch.setattr(pd, "read_csv", pandas_spy)
    monkeypatch.setattr(pa_csv, "read_csv", arrow_spy)
    code, message = refusal(upload(task, user, wide))
    assert code == "FIELD_COUNT" == io.CODES[io.FIELD_COUNT]
    assert message == (
        "run.csv, line 1: expected 2 (id,label) or 4 (id and one column per label: a, b, c) fields, found 1000001"
    )
    # the stored gold file, read to check against unless this process keeps it parsed already
    # (uploads.kept_gold); never the upload
    assert parsed in ([], [GOLD.split(b"\n", 1)[1][:16]])


def test_the_upload_page_shows_the_wide_header_refusal(toy, django_capture_on_commit_callbacks):
    task, user = toy
    client = Client()
    client.force_login(user)
    wide = ("id,label" + ",x" * WIDE + "\n1,a\n").encode()
    before = stored_counts()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("leaderboard:submission_create", args=[task.slug]), {"file": SimpleUploadedFile("run.csv", wide)}
        )
    assert response["Location"] == task.get_absolute_url()
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "The file was refused: run.csv, line 1: expected 2 (id,label) or 4 (id and one column per label: "
        "a, b, c) fields, found 1000002"
    ]
    assert stored_counts() == before


# --- any label works ---------------------------------------------------------------------------


def test_labels_that_look_like_header_names_score_in_hard_and_soft_files(odd_task, upload):
    task, user = odd_task
    hard = upload(task, user, label_file(ODD_GOLD_LABELS))
    assert hard.kind == Submission.Kind.HARD and hard.metrics["accuracy"] == 1.0
    for header, id_column in (
        (["id", "label", "ID", "x]", "two words"], "id"),
        (["two words", " ID ", "x]", "Id", "label"], "Id"),  # the id column after the labels, padded names
    ):
        soft = upload(task, user, one_hot_file(header, id_column, ODD_GOLD_LABELS))
        assert soft.kind == Submission.Kind.SOFT, header
        assert soft.metrics["accuracy"] == 1.0
        assert soft.confusion_matrix == hard.confusion_matrix


def test_a_label_called_id_works_once_the_id_column_is_told_apart(make_task, make_user, upload):
    gold = ["id", "b", "id", "b", "id", "id", "b", "b"]
    task = make_task("label-id", labels=["id", "b"], gold=label_file(gold))
    user = member_of(task, make_user, "Ids")
    assert upload(task, user, label_file(gold)).metrics["accuracy"] == 1.0
    soft = upload(task, user, one_hot_file(["ID", "id", "b"], "ID", gold))
    assert soft.kind == Submission.Kind.SOFT and soft.metrics["accuracy"] == 1.0
    code, message = refusal(upload(task, user, one_hot_file(["id", "id", "b"], "id", gold)))
    assert code == "AMBIGUOUS_ID_COLUMN"
    assert message == "run.csv, line 1: " + io.AMBIGUOUS_ID_COLUMN.format(column="id", suggestion="ID")


# --- blank lines before the header -------------------------------------------------------------


def test_a_blank_first_line_is_refused_with_a_message_that_says_so(make_task, make_user, upload):
    task = make_task("blank-first")
    user = member_of(task, make_user, "Blank")
    code, message = refusal(upload(task, user, b"\n" + PERFECT))
    assert code == "BLANK_BEFORE_HEADER"
    assert message == "run.csv, line 1: " + io.BLANK_BEFORE_HEADER
    with pytest.raises(ValidationError) as caught:
        make_task("blank-gold", gold=b"\n\r\n" + GOLD)
    assert caught.value.messages == ["gold file, line 1: " + io.BLANK_BEFORE_HEADER]


# --- probability rows are renormalised ---------------------------------------------------------


def test_soft_rows_summing_to_0_999_are_renormalised_before_the_matrix_is_stored(toy, upload):
    task, user = toy
    rows = "".join(f"{k},0.333,0.333,0.333\n" for k in IDS)
    submission = upload(task, user, ("id,a,b,c\n" + rows).encode())
    assert submission.kind == Submission.Kind.SOFT
    matrix = submission.confusion_matrix
    assert sum(map(sum, matrix)) == pytest.approx(8, rel=0, abs=1e-9)
    assert [sum(column) for column in zip(*matrix, strict=True)] == pytest.approx([4, 2, 2], rel=0, abs=1e-9)
