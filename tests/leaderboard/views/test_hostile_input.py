"""Hostile input on the upload path, and hostile text on every page that shows it.

The promise under test: whatever arrives, the service either refuses it with a
``ValidationError`` whose message names the problem (and the line, where there is one) and
stores nothing, or stores it and scores it cleanly. No other exception, never a 500, never a
half-stored upload. Text that people choose (team names, task titles, labels, file names) is
inert wherever it comes out: escaped in pages, defused in the CSV export, cut to a base name.

Property tests draw from hypothesis; each keeps its example count small so that the module
runs in well under a minute.
"""

from __future__ import annotations

import csv
import html
import io as text_io
import itertools
import json
import math
import re
import string
import unicodedata
import uuid

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from leaderboard import errors, uploads
from leaderboard.charts import confusion_heatmap
from leaderboard.models import StoredFile, Submission, Task
from leaderboard.services.submissions import submission_create
from leaderboard.services.tasks import gold_replace
from leaderboard.services.teams import team_create
from scoring.engine import io
from tests.conftest import GOLD, PERFECT

pytestmark = pytest.mark.django_db


def fuzz(examples: int) -> settings:
    """Hypothesis settings: the DB fixtures are shared by the examples of one test on purpose
    (every check compares counts before and after, so earlier examples do not matter)."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


GOLD_IDS = [str(i) for i in range(1, 9)]
GOLD_LABELS = list("abcabcaa")
WRONG_WAY = list("bcabcabb")  # below chance: negative kappa
SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
SVG = "<svg onload=alert(3)>"
FORMULAS = ["=cmd|' /C calc'!A0", "+1", "-1+1", "@SUM(1)"]
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def stored_counts() -> tuple[int, int]:
    return StoredFile.objects.count(), Submission.objects.count()


def label_file(labels: list[str], ids: list[str] | None = None) -> bytes:
    ids = GOLD_IDS if ids is None else ids
    return ("id,label\n" + "".join(f"{i},{label}\n" for i, label in zip(ids, labels, strict=True))).encode()


def message_of(result: object) -> str:
    assert isinstance(result, ValidationError), f"expected a refusal, got {result!r}"
    return " ".join(result.messages)


FILE_PROBLEMS = [
    io.EMPTY_FILE,
    io.UNDECODABLE,
    io.UTF16,
    io.MISSING_HEADER,
    io.MISSING_COLUMN,
    io.UNEXPECTED_COLUMN,
    io.DUPLICATE_COLUMN,
    io.NO_ROWS,
    io.FIELD_COUNT,
    io.MALFORMED,
    io.EMPTY_VALUE,
    io.EMPTY_LINE,
    io.BLANK_BEFORE_HEADER,
    io.DUPLICATE_ID,
    io.UNKNOWN_LABEL,
    io.UNKNOWN_ID,
    io.MISSING_IDS,
    io.NOT_A_PROBABILITY,
    io.PROBABILITIES_DONT_SUM,
    io.TOO_MANY_LINES,
]


def template_pattern(template: str) -> str:
    """A regular expression for the messages a template makes: its text, any value per field."""
    parts = string.Formatter().parse(template)
    return "".join(re.escape(literal) + (".*?" if field is not None else "") for literal, field, _, _ in parts)


TEMPLATE_OF = {io.CODES[template]: template for template in FILE_PROBLEMS}
"""A file problem's stable code → its message template."""


def file_problem(error: ValidationError, name: str = "run.csv") -> str:
    """The named problem (an ``io`` template) of a refused file, after checking that its code is
    the template's stable code and the message that template, filled in, after the file's name
    and (if any) the line."""
    [item] = [item for items in error.update_error_dict({}).values() for item in items]
    assert item.code in TEMPLATE_OF, f"not a named file problem: {error.messages}"
    template = TEMPLATE_OF[item.code]
    where = re.escape(name) + r"(, line \d+)?: "
    assert re.fullmatch(where + template_pattern(template), item.message, flags=re.S), item.message
    return template


def page(name: str, task: Task, *args: object) -> str:
    return reverse(f"leaderboard:{name}", args=[task.slug, *args])


@pytest.fixture
def fuzz_task(make_task) -> Task:
    """The toy task with limits high enough for every example of a property test."""
    return make_task("fuzz", max_per_day=100_000, max_total=100_000)


@pytest.fixture
def member(fuzz_task, make_user):
    user = make_user("alice")
    team_create(task=fuzz_task, user=user, name="Alpha")
    return user


@pytest.fixture
def upload(django_capture_on_commit_callbacks):
    """Upload through the service and score at commit.

    Returns the scored submission, or the ``ValidationError`` of a refusal; any other
    exception escapes (and fails the test). Checks that a refusal stored nothing, that an
    accepted file stored one file and one submission, and that it scored without failing.
    """

    def run(task: Task, user, content: bytes, name: str = "run.csv", **options) -> Submission | ValidationError:
        before = stored_counts()
        try:
            with django_capture_on_commit_callbacks(execute=True):
                submission = submission_create(task=task, user=user, name=name, content=content, **options)
        except ValidationError as error:
            assert stored_counts() == before, "a refused upload left rows behind"
            assert error.messages and all(message.strip() for message in error.messages)
            return error
        assert stored_counts() == (before[0] + 1, before[1] + 1)
        submission.refresh_from_db()
        assert submission.status == Submission.Status.SCORED, submission.failure
        return submission

    return run


@pytest.fixture
def post_file(django_capture_on_commit_callbacks):
    """Post a file to the upload view as a new browser session; returns (response, messages)."""

    def post(task: Task, user, content: bytes, name: str = "run.csv"):
        client = Client()
        client.force_login(user)
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(page("submission_create", task), {"file": SimpleUploadedFile(name, content)})
        return response, [str(m) for m in get_messages(response.wsgi_request)]

    return post


# --- bytes and text of every kind --------------------------------------------------------------

CSV_ALPHABET = st.sampled_from([*"id,label\t\r\n\"' abc123.-=e", "\x00", "é", "\u200b", "\ufeff", "\ud7ff"])
CSV_LIKE = st.lists(CSV_ALPHABET, max_size=80).map("".join)
ANY_FILE = st.one_of(
    st.binary(max_size=200),
    CSV_LIKE.map(str.encode),
    CSV_LIKE.map(lambda body: ("id,label\n" + body).encode()),
    CSV_LIKE.map(lambda body: ("id,a,b,c\n" + body).encode()),
    st.lists(st.tuples(st.sampled_from([*GOLD_IDS, "9", ""]), st.sampled_from(["a", "b", "c", "d", ""])), max_size=10)
    .map(lambda rows: "id,label\n" + "".join(f"{i},{label}\n" for i, label in rows))
    .map(str.encode),
)


@fuzz(150)
@given(content=ANY_FILE)
def test_any_bytes_are_refused_with_a_message_or_scored(fuzz_task, member, upload, content):
    result = upload(fuzz_task, member, content)
    if isinstance(result, ValidationError):
        file_problem(result)


@fuzz(30)
@given(content=ANY_FILE)
def test_the_upload_view_never_fails_on_any_bytes(fuzz_task, member, post_file, content):
    before = stored_counts()
    response, messages = post_file(fuzz_task, member, content)
    assert response.status_code == 302
    if response["Location"] == fuzz_task.get_absolute_url():
        [message] = messages
        assert message.startswith("The file was refused: ")
        assert stored_counts() == before
    else:
        assert Submission.objects.latest("pk").get_absolute_url() == response["Location"]


@st.composite
def prediction_texts(draw) -> tuple[list[str], str]:
    """A valid hard prediction file for the toy task, written in any accepted way: rows in any
    order, LF, CRLF or CR line ends, every field quoted or none. Returns (labels, text)."""
    labels = draw(st.lists(st.sampled_from("abc"), min_size=8, max_size=8))
    order = draw(st.permutations(range(8)))
    line_end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    quote = draw(st.sampled_from(["", '"']))
    rows = [("id", "label")] + [(GOLD_IDS[k], labels[k]) for k in order]
    return labels, "".join(f"{quote}{i}{quote},{quote}{label}{quote}{line_end}" for i, label in rows)


def expected_matrix(predicted: list[str]) -> list[list[int]]:
    """Rows predicted, columns gold (DESIGN.md), counted directly."""
    index = {label: k for k, label in enumerate("abc")}
    matrix = [[0] * 3 for _ in range(3)]
    for p, g in zip(predicted, GOLD_LABELS, strict=True):
        matrix[index[p]][index[g]] += 1
    return matrix


@fuzz(40)
@given(case=prediction_texts(), bom=st.booleans())
def test_line_ends_quoting_row_order_and_a_utf8_bom_all_score_the_same(fuzz_task, member, upload, case, bom):
    labels, text = case
    content = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    submission = upload(fuzz_task, member, content)
    assert isinstance(submission, Submission), message_of(submission)
    assert submission.confusion_matrix == expected_matrix(labels)


@fuzz(25)
@given(case=prediction_texts(), encoding=st.sampled_from(["utf-16", "utf-16-le", "utf-16-be"]))
def test_utf16_with_or_without_a_bom_is_named(fuzz_task, member, upload, case, encoding):
    _, text = case
    message = message_of(upload(fuzz_task, member, text.encode(encoding)))
    assert message == "run.csv, line 1: " + io.UTF16


@pytest.fixture
def accents(make_task, make_user) -> tuple[Task, object]:
    """A task with the labels a, é, ü and a member of a team in it."""
    task = make_task("accents", labels=("a", "é", "ü"), gold=label_file(["a", "é", "ü", "a", "é", "ü", "a", "a"]))
    user = make_user("accented")
    team_create(task=task, user=user, name="Accents")
    return task, user


@fuzz(25)
@given(case=prediction_texts(), encoding=st.sampled_from(["latin-1", "cp1252"]))
def test_a_single_byte_encoding_is_named_with_the_line(accents, upload, case, encoding):
    """Labels "é" and "ü" are one byte in latin-1/cp1252 and two in UTF-8: the refusal names the
    line of the first one (line ends of any kind counted)."""
    task, user = accents
    _, text = case
    text = text.replace(",b", ",é").replace(',"b"', ',"é"').replace(",c", ",ü").replace(',"c"', ',"ü"')
    lines = text.replace("\r\n", "\n").replace("\r", "\n").splitlines()
    first = next((n for n, line in enumerate(lines, start=1) if "é" in line or "ü" in line), None)
    result = upload(task, user, text.encode(encoding))
    if first is None:  # pure ASCII is the same in every encoding
        assert isinstance(result, Submission)
    else:
        message = message_of(result)
        assert message.startswith(f"run.csv, line {first}: the bytes at offset ")
        assert message.endswith("are not UTF-8 text; save the file as UTF-8")


# --- ids: duplicates, omissions, strangers -----------------------------------------------------


def expected_id_refusal(ids: list[str]) -> str | None:
    """The message a file with these ids must be refused with (None: accepted), worked out
    from the rules of DESIGN.md: duplicates first, then ids not in the gold file, then gold ids
    without a prediction. Lines count the header as line 1."""
    for row, item in enumerate(ids):
        if item in ids[:row]:
            return f"run.csv, line {row + 2}: " + io.DUPLICATE_ID.format(id=item, first_line=ids.index(item) + 2)
    for row, item in enumerate(ids):
        if item not in GOLD_IDS:
            return f"run.csv, line {row + 2}: " + io.UNKNOWN_ID.format(id=item)
    missing = [item for item in GOLD_IDS if item not in ids]
    if missing:
        gold_line = GOLD_IDS.index(missing[0]) + 2
        return "run.csv: " + io.MISSING_IDS.format(count=len(missing), id=missing[0], gold_line=gold_line)
    return None


@fuzz(60)
@given(ids=st.lists(st.sampled_from([*GOLD_IDS, "9", "01", "1 "]), min_size=1, max_size=12))
def test_duplicate_missing_and_unknown_ids(fuzz_task, member, upload, ids):
    result = upload(fuzz_task, member, label_file(["a"] * len(ids), ids))
    expected = expected_id_refusal(ids)
    if expected is None:
        assert isinstance(result, Submission)
    else:
        assert message_of(result) == expected


# --- size limits -------------------------------------------------------------------------------


def test_more_rows_than_allowed(fuzz_task, member, upload, post_file, settings):
    settings.MAX_FILE_ROWS = 5
    message = message_of(upload(fuzz_task, member, PERFECT))
    assert message == "run.csv, line 7: " + io.TOO_MANY_LINES.format(limit=5)
    _, messages = post_file(fuzz_task, member, PERFECT)
    assert messages == ["The file was refused: " + message]
    with pytest.raises(ValidationError) as caught:
        gold_replace(phase=fuzz_task.current_phase(), gold_name="g.csv", gold_content=GOLD)
    assert "line 7" in caught.value.messages[0]
    settings.MAX_FILE_ROWS = 8
    assert isinstance(upload(fuzz_task, member, PERFECT), Submission)


def test_a_file_over_the_size_limit(fuzz_task, member, upload, post_file, settings):
    settings.MAX_UPLOAD_BYTES = 40
    expected = errors.FILE_TOO_LARGE.format(size=len(PERFECT), limit=40)
    assert message_of(upload(fuzz_task, member, PERFECT)) == expected
    before = stored_counts()
    response, messages = post_file(fuzz_task, member, PERFECT)
    assert response["Location"] == fuzz_task.get_absolute_url()
    assert messages == ["The file was refused: " + expected]
    assert stored_counts() == before
    with pytest.raises(ValidationError) as caught:
        gold_replace(phase=fuzz_task.current_phase(), gold_name="g.csv", gold_content=GOLD)
    assert caught.value.messages == [errors.FILE_TOO_LARGE.format(size=len(GOLD), limit=40)]


MEGABYTE = "x" * 1_000_000
HUGE_LINES = {
    "huge id": (label_file(GOLD_LABELS, [MEGABYTE, *GOLD_IDS[1:]]), 2, "the id 'xxx"),
    "huge label": (label_file(["a", MEGABYTE, *GOLD_LABELS[2:]]), 3, "unknown label 'xxx"),
    "huge header field": (f"id,label,{MEGABYTE}\n".encode() + PERFECT.split(b"\n", 1)[1], 1, "unexpected column"),
    "huge id, empty label": (f"id,label\n{MEGABYTE},\n".encode() + PERFECT.split(b"\n", 2)[2], 2, "the label is empty"),
    "huge quoted field": (PERFECT.replace(b"5,b", f'5,"{MEGABYTE}"'.encode()), 6, "unknown label 'xxx"),
}


def test_a_one_megabyte_id_in_gold_and_predictions_scores(make_task, make_user, upload):
    ids = [MEGABYTE, *GOLD_IDS[1:]]
    task = make_task("huge", gold=label_file(GOLD_LABELS, ids))
    user = make_user("huge-user")
    team_create(task=task, user=user, name="Huge")
    assert upload(task, user, label_file(GOLD_LABELS, ids)).metrics["accuracy"] == 1.0


@pytest.mark.parametrize(("content", "line", "problem"), HUGE_LINES.values(), ids=HUGE_LINES)
def test_a_one_megabyte_field_is_refused_with_a_short_message(fuzz_task, member, post_file, content, line, problem):
    before = stored_counts()
    _, messages = post_file(fuzz_task, member, content)
    [message] = messages
    assert message.startswith(f"The file was refused: run.csv, line {line}: {problem}")
    assert len(message) < 2 * io.LONGEST_QUOTED + 200  # the value is quoted cut, not whole
    assert stored_counts() == before


# --- labels in odd Unicode ---------------------------------------------------------------------

ODD_CHARACTERS = ["\u0301", "\u200b", "\u200d", "\u200f", "\u202e", "ש", "ع", "👍", "🏽", "é", "ﷺ", "Ⅻ", "ß"]
ODD_LABELS = st.lists(
    st.one_of(st.sampled_from(ODD_CHARACTERS), st.characters(categories=["L", "M", "N", "So"])), min_size=1, max_size=5
).map("".join)
SLUGS = itertools.count()


def usable(label: str) -> bool:
    """Labels a task takes as they are: no surrounding space (it would be stripped), not a
    header name."""
    return label == label.strip() and label.lower() not in ("id", "label")


@fuzz(15)
@given(labels=st.lists(ODD_LABELS.filter(usable), min_size=2, max_size=4, unique=True), data=st.data())
def test_odd_unicode_labels_work_as_gold_labels_and_in_predictions(make_task, make_user, upload, labels, data):
    gold_labels = data.draw(st.permutations(labels * 2))
    task = make_task(f"odd-{next(SLUGS)}", labels=labels, gold=label_file(gold_labels, GOLD_IDS[: len(gold_labels)]))
    assert task.labels == labels
    user = make_user(f"odd-user-{task.pk}")
    team_create(task=task, user=user, name="Odd")
    ids = GOLD_IDS[: len(gold_labels)]

    perfect = upload(task, user, label_file(gold_labels, ids))
    assert perfect.metrics["accuracy"] == 1.0

    header = "id," + ",".join(reversed(labels))
    rows = [
        f"{i}," + ",".join("1" if label == gold else "0" for label in reversed(labels))
        for i, gold in zip(ids, gold_labels, strict=True)
    ]
    soft = upload(task, user, "\n".join([header, *rows, ""]).encode())
    assert soft.kind == Submission.Kind.SOFT and soft.metrics["accuracy"] == 1.0

    row = data.draw(st.integers(0, len(ids) - 1))
    altered = gold_labels[row] + "\u200b"  # looks the same, is another string
    assume(altered not in labels)
    predictions = [*gold_labels[:row], altered, *gold_labels[row + 1 :]]
    message = message_of(upload(task, user, label_file(predictions, ids)))
    assert message.startswith(f"run.csv, line {row + 2}: unknown label {altered!r}")


def test_a_decomposed_accent_is_another_label(make_task, make_user, upload, client):
    """NFC "é" and NFD "e" + U+0301 look alike but are different strings: the file is refused,
    and the message quotes the label as it is in the file."""
    composed = unicodedata.normalize("NFC", "é")
    labels = [composed, "שלום", "a\u200bb", "👍🏽", "\u202eabc"]
    gold = [*labels, composed, composed, composed]
    task = make_task("unicode", labels=labels, gold=label_file(gold))
    user = make_user("unicode-user")
    team_create(task=task, user=user, name="Unicode")
    decomposed = unicodedata.normalize("NFD", composed)
    message = message_of(upload(task, user, label_file([decomposed, *gold[1:]])))
    assert message.startswith(f"run.csv, line 2: unknown label {decomposed!r}")
    scored = upload(task, user, label_file(gold))
    assert scored.metrics["accuracy"] == 1.0
    client.force_login(user)
    for url in (task.get_absolute_url(), scored.get_absolute_url(), page("leaderboard", task)):
        response = client.get(url)
        assert response.status_code == 200
        assert html.escape(labels[1]) in response.content.decode()


# --- formulas in the CSV export ----------------------------------------------------------------


def csv_rows(client: Client, task: Task) -> tuple[list[str], dict[str, list[str]]]:
    response = client.get(page("leaderboard_csv", task))
    assert response.status_code == 200
    header, *body = csv.reader(text_io.StringIO(response.content.decode()))
    return header, {row[0]: row for row in body}


def test_formula_team_names_are_inert_in_the_csv_and_numbers_stay_numbers(client, fuzz_task, make_user, submit):
    for index, (name, labels) in enumerate(
        zip(FORMULAS, [GOLD_LABELS, WRONG_WAY, ["a"] * 8, GOLD_LABELS], strict=True)
    ):
        user = make_user(f"formula{index}")
        team_create(task=fuzz_task, user=user, name=name)
        submit(fuzz_task, user, label_file(labels))
    header, rows = csv_rows(client, fuzz_task)
    for name in FORMULAS:
        assert name not in rows
        row = rows["'" + name]
        for column, cell in zip(header[4:], row[4:], strict=True):
            assert cell == "" or math.isfinite(float(cell)), f"{column} of {name!r} is not a number: {cell!r}"
    kappa = rows["'" + FORMULAS[1]][header.index("kappa")]
    assert kappa.startswith("-") and float(kappa) < 0  # a negative number is a number, not a formula
    page_content = client.get(page("leaderboard", fuzz_task)).content.decode()
    assert html.escape(FORMULAS[0]) in page_content  # only the CSV gets the apostrophe


@fuzz(25)
@given(
    name=st.tuples(
        st.sampled_from(["", *FORMULA_TRIGGERS[:4]]),
        st.text(st.characters(exclude_categories=["Cs", "Cc"]), max_size=20),
    ).map("".join)
)
def test_any_team_name_comes_out_of_the_csv_as_text(client, fuzz_task, make_user, name):
    """A name is stored NFKC-normalised with single spaces, or refused if a reader could not see
    all of it; a stored one comes out of the CSV as text."""
    user = make_user(f"named-{uuid.uuid4().hex}")
    if any(unicodedata.category(ch) in {"Cf", "Co", "Cn", "Cc", "Cs"} for ch in name):
        with pytest.raises(ValidationError) as caught:
            team_create(task=fuzz_task, user=user, name=name)
        assert errors.problem_codes(caught.value) == {errors.HIDDEN_CHARACTERS.code}
        return
    normalised = " ".join(unicodedata.normalize("NFKC", name).split())
    assume(normalised)
    names = fuzz_task.community.teams.values_list("name", flat=True)
    assume(not any(t.casefold() == normalised.casefold() for t in names))
    team_create(task=fuzz_task, user=user, name=name)
    _, rows = csv_rows(client, fuzz_task)
    expected = "'" + normalised if normalised.startswith(FORMULA_TRIGGERS) else normalised
    assert expected in rows


# --- HTML and JavaScript in people's text ------------------------------------------------------


@pytest.fixture
def hostile_task(make_task, make_user, upload):
    """A task whose title, description, a label, team names, file names and submission
    descriptions are all markup."""
    labels = [SVG, "b", "c"]
    task = make_task(
        "hostile", title=SCRIPT, description=IMG + "\n" + SCRIPT, labels=labels, gold=svg_file(GOLD_LABELS)
    )
    submissions = []
    for index, (name, predicted) in enumerate([(SCRIPT, GOLD_LABELS), (IMG, WRONG_WAY)]):
        user = make_user(f"hostile{index}")
        team_create(task=task, user=user, name=name)
        submissions.append(upload(task, user, svg_file(predicted), name=IMG + ".csv", description=SCRIPT))
    return task, submissions


def svg_file(labels: list[str]) -> bytes:
    """A toy label file with the label "a" renamed to the markup label."""
    return label_file([SVG if label == "a" else label for label in labels])


def hostile_pages(task: Task, submission: Submission) -> dict[str, str]:
    return {
        "task list": reverse("leaderboard:task_list"),
        "task page": task.get_absolute_url(),
        "leaderboard": page("leaderboard", task),
        "metric page": page("metric_detail", task, "macro_recall"),
        "per-class metric page": page("metric_detail", task, f"recall[{SVG}]"),
        "disagreements": page("disagreements", task),
        "submission page": submission.get_absolute_url(),
    }


@pytest.mark.parametrize("viewer", ["member", "organiser"])
def test_markup_is_escaped_on_every_page(client, hostile_task, organiser, viewer):
    task, submissions = hostile_task
    client.force_login(organiser if viewer == "organiser" else submissions[0].submitted_by)
    for name, url in hostile_pages(task, submissions[0]).items():
        response = client.get(url)
        assert response.status_code == 200, name
        content = response.content.decode()
        for payload in (SCRIPT, IMG, SVG):
            assert payload not in content, f"{payload} unescaped on the {name}"
        assert html.escape(SCRIPT) in content, f"the title or a team name is missing from the {name}"
    content = client.get(submissions[0].get_absolute_url()).content.decode()
    assert html.escape(IMG + ".csv") in content
    assert html.escape(SVG) in content


def test_a_markup_team_name_is_escaped_in_the_flash_message(client, fuzz_task, make_user):
    client.force_login(make_user("marker"))
    response = client.post(page("team_create", fuzz_task), {"name": IMG}, follow=True)
    content = response.content.decode()
    assert f"You created the team “{html.escape(IMG)}”" in content
    assert IMG not in content


# --- file names --------------------------------------------------------------------------------

PATH_TRICKS = {
    "../../etc/passwd": "passwd",
    "C:\\x\\y.csv": "y.csv",
    "run\x00.csv": "run.csv",
    "/": "upload",
    "..": "upload",
    "a/..": "upload",
    ".\x00.": "upload",
    "\u202egnp.csv": "gnp.csv",
}


@pytest.mark.parametrize(("name", "expected"), PATH_TRICKS.items(), ids=[repr(n) for n in PATH_TRICKS])
def test_path_tricks_in_file_names_are_stored_as_a_safe_base_name(fuzz_task, member, upload, name, expected):
    submission = upload(fuzz_task, member, PERFECT, name=name)
    assert submission.file.name == expected


def multipart(filename: str, content: bytes) -> tuple[bytes, str]:
    """A request body with the file name exactly as given (the test client would clean it)."""
    boundary = "hostile-boundary"
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n\r\n'
    return head.encode() + content + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


@pytest.mark.parametrize(
    ("name", "expected"), [("../../etc/passwd", "passwd"), ("C:\\x\\y.csv", "y.csv"), ("a\x00b.csv", "ab.csv")]
)
def test_path_tricks_through_the_upload_view(
    client, fuzz_task, member, name, expected, django_capture_on_commit_callbacks
):
    client.force_login(member)
    body, content_type = multipart(name, PERFECT)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(page("submission_create", fuzz_task), body, content_type=content_type)
    submission = Submission.objects.get()
    assert response["Location"] == submission.get_absolute_url()
    assert submission.file.name == expected


@fuzz(200)
@given(name=st.text(max_size=40))
def test_safe_file_name_is_always_a_printable_base_name(name):
    safe = uploads.safe_file_name(name)
    assert 0 < len(safe) <= 200
    assert "/" not in safe and "\\" not in safe
    assert safe not in (".", "..")
    assert safe.isprintable()


def test_the_toy_files_are_what_these_tests_assume():
    assert label_file(GOLD_LABELS) == GOLD == PERFECT


def test_class_labels_are_escaped_in_the_confusion_heatmap():
    figure = json.loads(confusion_heatmap([[1, 0], [0, 1]], ["<b>x</b>", "y"], title="raw"))
    axis_text = figure["data"][0]["x"] + figure["data"][0]["y"]
    assert "gold &lt;b&gt;x&lt;/b&gt;" in axis_text
    assert not any("<b>" in text for text in axis_text)
