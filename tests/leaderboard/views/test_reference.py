"""Formulas as MathML, and the references the pages cite.

What this proves: every formula of the registry (metrics and per-class measures) converts to
well-formed block MathML, and only the registry's own formulas are converted; every citation in
a registry string names a listed reference; and on the demo, no page (the board raw and
calibrated, both heatmap sets, every column's metric page, every submission's page seen by the
organiser, the references page) shows a LaTeX command outside a MathML annotation or a
"paper 000"-style citation, while every citation link lands on an anchor of the references
page, which lists every reference with its authors and year.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.template import Context, Template
from django.urls import reverse

from leaderboard.management.commands.load_demo import SLUG
from leaderboard.mathml import FORMULAS, NOT_A_REGISTRY_FORMULA, formula_mathml, latex_to_mathml
from leaderboard.models import Submission, Task
from leaderboard.pages.disagreements import COLUMN_SET_NOTES, COLUMN_SETS
from leaderboard.selectors.boards import columns_of, paired_columns
from scoring.engine import references
from scoring.engine.columns import PAPER_SET_KEYS
from scoring.engine.registry import BY_KEY, CLASS_MEASURES, ITEM_METRICS, METRICS, ORDINAL_METRICS

ENTRIES = (*METRICS, *CLASS_MEASURES)
MATHML = "{http://www.w3.org/1998/Math/MathML}"
LATEX_COMMANDS = sorted({command for latex in FORMULAS for command in re.findall(r"\\[A-Za-z]+", latex)})
"""Every LaTeX command the registry's formulas use (``\\frac``, ``\\sum``, ...)."""
ANNOTATION = re.compile(r"<annotation\b[^>]*>.*?</annotation>", re.DOTALL)
CITE_LINK = re.compile(r'href="/references/#([^"]+)"')
OLD_CITATION = re.compile(r"paper 00\d", re.IGNORECASE)


def visible_strings(entry) -> list[str]:
    return [entry.name, entry.formula_text, entry.source, entry.properties_source, entry.description]


# --- formulas ------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda entry: f"{type(entry).__name__}:{entry.key}")
def test_every_registry_formula_converts_to_block_mathml(entry):
    assert entry.formula_latex, f"{entry.key} has no LaTeX formula"
    mathml = formula_mathml(entry)
    root = ET.fromstring(mathml)  # well-formed XML
    assert root.tag == f"{MATHML}math" and root.get("display") == "block"
    semantics = root.find(f"{MATHML}semantics")
    assert semantics is not None
    assert semantics.find(f"{MATHML}annotation").text == entry.formula_latex
    rendered = ANNOTATION.sub("", mathml)
    assert "\\" not in rendered, f"unconverted LaTeX in {entry.key}: {rendered}"
    assert "<merror" not in rendered


def test_only_registry_formulas_are_converted():
    with pytest.raises(ValueError, match=NOT_A_REGISTRY_FORMULA):
        latex_to_mathml(r"\frac{<script>alert(1)</script>}{1}")
    assert len(FORMULAS) == len({entry.formula_latex for entry in (*ENTRIES, *ORDINAL_METRICS, *ITEM_METRICS)})


def test_conversion_is_cached():
    latex = METRICS[0].formula_latex
    assert latex_to_mathml(latex) is latex_to_mathml(latex)
    assert formula_mathml(METRICS[0]) is latex_to_mathml(latex)
    assert latex_to_mathml.cache_info().currsize <= len(FORMULAS)


# --- references and citations --------------------------------------------------------------------


def test_references_have_unique_keys_and_a_citation_text():
    keys = [reference.key for reference in references.REFERENCES]
    assert len(keys) == len(set(keys))
    shorts = [reference.short for reference in references.REFERENCES]
    assert len(shorts) == len(set(shorts)), "two references would be cited alike"
    for reference in references.REFERENCES:
        assert reference.title and reference.provenance
        assert reference.year_text in reference.short


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda entry: f"{type(entry).__name__}:{entry.key}")
def test_every_citation_in_the_registry_names_a_listed_reference(entry):
    for text in visible_strings(entry):
        assert "@" not in references.CITATION.sub("", text), f"{entry.key}: unknown citation in {text!r}"
        assert not OLD_CITATION.search(text), f"{entry.key}: {text!r}"
        assert "@" not in references.plain(text)
    assert references.cited([entry.source]), f"{entry.key} cites no reference as its source"


def test_citations_are_written_by_author_and_year():
    opitz = references.get("opitz-overview")
    assert references.plain(BY_KEY["accuracy"].source) == f"{opitz.short}, Eq. 7"
    assert references.get("opitz-burst-note").short == "Opitz & Burst 2019a"
    assert references.plain("mail a@b.org about @opitz-overviewx") == "mail a@b.org about @opitz-overviewx"
    with pytest.raises(KeyError, match="known: opitz-overview"):
        references.get("paper000")


def test_the_cite_filter_links_citations_and_escapes_the_rest():
    rendered = Template("{{ text|cite }}").render(Context({"text": "<b>x</b> @opitz-burst-note, Eq. 2 @nobody"}))
    assert rendered == (
        '&lt;b&gt;x&lt;/b&gt; <a class="cite" href="/references/#opitz-burst-note">Opitz &amp; Burst 2019a</a>'
        ", Eq. 2 @nobody"
    )


def test_the_paper_column_set_has_a_name_and_a_note_a_visitor_understands():
    assert "paper's" not in COLUMN_SETS["paper"] and "Table 8" in COLUMN_SETS["paper"]
    note = references.plain(COLUMN_SET_NOTES["paper"])
    assert all(BY_KEY[key].symbol in note for key in PAPER_SET_KEYS)
    assert set(COLUMN_SET_NOTES) == set(COLUMN_SETS)


# --- the demo's pages ----------------------------------------------------------------------------


@pytest.fixture
def demo(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    return Task.objects.get(slug=SLUG)


def demo_pages(task: Task) -> list[str]:
    """Every results page of the demo an organiser can open."""
    slug = task.slug
    board = reverse("leaderboard:leaderboard", args=[slug])
    disagreements = reverse("leaderboard:disagreements", args=[slug])
    pages = [
        reverse("leaderboard:task_list"),
        reverse("leaderboard:task_detail", args=[slug]),
        board,
        board + "?calibrated=1",
        *(f"{disagreements}?set={name}" for name in COLUMN_SETS),
        reverse("leaderboard:references"),
    ]
    pages += [reverse("leaderboard:metric_detail", args=[slug, column.id]) for column in paired_columns(task)]
    pages += [
        reverse("leaderboard:submission_detail", args=[slug, submission.pk])
        for submission in Submission.objects.filter(phase__task=task)
    ]
    return pages


@pytest.fixture
def organiser_client(client, demo):
    client.force_login(get_user_model().objects.get(username="organiser"))
    return client


def test_no_demo_page_shows_raw_latex_or_an_old_citation(organiser_client, demo):
    assert {"\\frac", "\\sum", "\\sqrt", "\\mathrm"} <= set(LATEX_COMMANDS)
    pages = demo_pages(demo)
    assert len([page for page in pages if "/metrics/" in page]) == len(paired_columns(demo))
    anchors = set(re.findall(r'id="([^"]+)"', organiser_client.get(reverse("leaderboard:references")).content.decode()))
    linked: set[str] = set()
    for page in pages:
        response = organiser_client.get(page)
        assert response.status_code == 200, page
        content = response.content.decode()
        outside_annotations = ANNOTATION.sub("", content)
        for command in LATEX_COMMANDS:
            assert not re.search(re.escape(command) + r"(?![A-Za-z])", outside_annotations), (page, command)
        assert not OLD_CITATION.search(content), page
        assert "@opitz" not in content and "@measures" not in content, page
        if "/metrics/" in page:
            assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in content, page
            assert '<a class="cite" href="/references/#' in content, page
        linked |= set(CITE_LINK.findall(content))
    assert linked, "no page cites a reference"
    assert linked <= anchors, f"citations without an anchor: {linked - anchors}"


def test_submission_page_names_each_metric_formula_and_cites_by_author(organiser_client, demo):
    submission = Submission.objects.filter(phase__task=demo).first()
    response = organiser_client.get(reverse("leaderboard:submission_detail", args=[demo.slug, submission.pk]))
    content = response.content.decode()
    for column in columns_of(demo, calibrated=False):
        assert f'<th title="{html.escape(column.formula_text)}">' in content, column.id
    assert f'<a class="cite" href="/references/#opitz-overview">{references.get("opitz-overview").short}</a>' in content


def test_references_page_lists_every_reference_with_authors_and_year(client, db):
    response = client.get(reverse("leaderboard:references"))
    assert response.status_code == 200
    content = response.content.decode()
    for reference in references.REFERENCES:
        assert f'id="{reference.key}"' in content
        assert html.escape(reference.short) in content
        assert html.escape(reference.title) in content
        assert all(html.escape(author) in content for author in reference.authors)
        if reference.url:
            assert f'href="{reference.url}"' in content
    assert "/references/" in client.get(reverse("leaderboard:task_list")).content.decode()


def test_metric_pages_cite_by_author_and_year(organiser_client, demo):
    content = organiser_client.get(
        reverse("leaderboard:metric_detail", args=[demo.slug, "macro_f1_c"])
    ).content.decode()
    note = references.get("opitz-burst-note")
    overview = references.get("opitz-overview")
    assert f'<a class="cite" href="/references/#{note.key}">{html.escape(note.short)}</a>, Eq. 2' in content
    assert f'<a class="cite" href="/references/#{overview.key}">{overview.short}</a>, Eq. 6' in content


@pytest.mark.django_db
def test_the_references_page_documents_the_methods_with_their_sources(client):
    content = client.get(reverse("leaderboard:references")).content.decode()
    behind = content[content.index('id="behind-the-leader"') : content.index('id="overall-ranking"')]
    for key in ("koehn-2004", "holm-1979"):
        assert f'href="/references/#{key}"' in behind
    for fact in ("Assumptions.", "independent", "What Holm controls:", "0.05"):
        assert fact in behind
    overall = content[content.index('id="overall-ranking"') :]
    assert "Mean rank" in overall and "Borda count" in overall and "a tie gives neither team a point" in overall
