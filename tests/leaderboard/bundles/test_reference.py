"""A competition's reference file read as labels, and its pages read as text.

What this proves: a header names the columns (in either order, CSV or TSV), on a line of its
own or as the last of the comment lines that open the file; one label per line takes line
numbers for ids; a file that holds a header (or comments) and nothing else is a test set whose
labels are to come; one-hot rows give the number of the column with the 1; several 0/1
columns beside the ids are the outputs of a task with several labels an item; a table
without a header is a guess the preview asks about; JSON and binary are not labels; and a
page's HTML becomes text with no script, no unsafe link and no hidden character left.
"""

from __future__ import annotations

import pytest

from leaderboard.bundles.pages import page_text, text_of_html
from leaderboard.bundles.plan import LINE_NUMBER
from leaderboard.bundles.reference import HEADER_ONLY, ReferenceError, gold_csv, label_order, layout_of


def read(content: bytes, **columns) -> bytes:
    layout = layout_of(content)
    chosen = {"id_column": layout.id_column, "label_column": layout.label_column, **columns}
    return gold_csv(content, layout, **chosen)


@pytest.mark.parametrize(
    ("content", "expected", "certain"),
    [
        (b"filename,label\nimg_1.png,cat\nimg_2.png,dog\n", b"id,label\nimg_1.png,cat\nimg_2.png,dog\n", True),
        (b"Label\tID\ncat\t7\ndog\t8\n", b"id,label\n7,cat\n8,dog\n", True),
        (b"cat\ndog\n\ncat\n", b"id,label\n1,cat\n2,dog\n4,cat\n", True),
        (b"1 0 0\n0 0 1\n0 1 0\n", b"id,label\n1,0\n2,2\n3,1\n", True),
        (b"a1,x\na2,y\na3,x\n", b"id,label\na1,x\na2,y\na3,x\n", False),
        (b"# truth.txt\n#id\tgold\nx1\tpos\nx2\tneg\n", b"id,label\nx1,pos\nx2,neg\n", True),  # header in a comment
        (b"# truth.txt, tab-separated\nx1\tpos\nx2\tneg\nx3\tneg\n", b"id,label\nx1,pos\nx2,neg\nx3,neg\n", False),
        (b"label\n0\n1\n", b"id,label\n2,0\n3,1\n", True),  # a header naming its one column
        # several 0/1 columns beside the ids: a task of several outputs, one a column
        (b"id\tHS\tTR\tAG\nt1\t1\t0\t0\nt2\t0\t1\t1\n", b"id,HS,TR,AG\nt1,1,0,0\nt2,0,1,1\n", True),
        # ... beside a text column, left out: a guess the preview asks about
        (b"id,text,HS,TR\nt1,so bad,1,0\nt2,fine,0,1\nt3,ok,1,1\n", b"id,HS,TR\nt1,1,0\nt2,0,1\nt3,1,1\n", False),
    ],
)
def test_layouts(content, expected, certain):
    assert read(content) == expected
    assert layout_of(content).certain == certain


def test_the_organiser_chooses_other_columns():
    content = b"1,a,p\n2,b,p\n3,a,q\n"
    layout = layout_of(content)
    assert layout.kind == "table" and not layout.header and not layout.certain
    assert read(content, id_column=LINE_NUMBER, label_column="column 3") == b"id,label\n1,p\n2,p\n3,q\n"
    with pytest.raises(ReferenceError, match="two different columns"):
        read(content, id_column="column 2", label_column="column 2")


@pytest.mark.parametrize(
    ("content", "problem"), [(b'{"nodes": [1]}', "JSON"), (b"\xff\xfe\x00", "not UTF-8"), (b"\n\n", "empty")]
)
def test_what_is_not_labels(content, problem):
    layout = layout_of(content)
    assert layout.kind == "unreadable" and problem in layout.problem


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"id,label\n", "holds only a header (id,label), no labels yet"),
        (b"\xef\xbb\xbfid\tlabel\r\n\r\n", "holds only a header (id\tlabel), no labels yet"),
        (b"label\n", "holds only a header (label), no labels yet"),
        (b"# test_data/truth.txt\n# not yet available\n", "holds comment lines only, no labels yet"),
    ],
)
def test_a_header_without_labels_is_a_test_set_to_come(content, problem):
    layout = layout_of(content)
    assert layout.kind == HEADER_ONLY and layout.problem == problem
    with pytest.raises(ReferenceError, match="no labels yet"):
        gold_csv(content, layout, id_column="id", label_column="label")


def test_labels_in_natural_order():
    assert label_order({"class10", "class2", "b", "a"}) == ("a", "b", "class2", "class10")


def test_html_becomes_text():
    html = (
        '<h2>Rules</h2><p onclick="x()">One <a href="javascript:alert(1)">team</a> per '
        '<a href="https://example.org">person</a>.</p><script>steal()</script><style>p{}</style>'
        "<iframe src='https://evil'>frame</iframe><ol><li>first</li></ol>&amp;\u202eevil"
    )
    assert text_of_html(html) == "## Rules\n\nOne team per person (https://example.org).\n\n- first\n\n&evil"
    assert page_text(b"# Title\n\nMarkdown *stays*\r\n", name="overview.md") == "# Title\n\nMarkdown *stays*"
    assert page_text(b"<p>no suffix</p>", name="page") == "no suffix"
