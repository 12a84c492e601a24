"""The texts the metrics come from, as data, and the citation mark-up of registry strings.

A registry string cites a reference by its key after an ``@``: ``"@opitz-overview, Eq. 7"``.
:func:`plain` writes it for a terminal (``"Opitz 2024, Eq. 7"``); :func:`parts` splits it so a
page can link each citation to its entry on the references page.

Every fact below is taken from the papers' texts, or from the public record of the same work
where a text does not state it (:attr:`Reference.provenance` says which); where neither states
one, it is left out rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

UNDATED = "n.d."
"""How a citation writes a year the text does not state."""


@dataclass(frozen=True)
class Reference:
    """One text the suite is built from.

    ``authors`` as printed (may be empty when the text names none); ``year_suffix`` tells two
    texts of the same authors and year apart (``2019a``, ``2019b``); ``url`` only where the
    texts name an address or an arXiv id.
    """

    key: str
    authors: tuple[str, ...]
    title: str
    year: int | None
    provenance: str
    venue: str | None = None
    url: str | None = None
    year_suffix: str = ""
    note: str = ""

    @property
    def surnames(self) -> str:
        """``Opitz``, ``Opitz & Burst``, ``Opitz et al.``; the quoted title if no author is named."""
        names = [author.split()[-1] for author in self.authors]
        if not names:
            return f"“{self.title}”"
        if len(names) <= 2:
            return " & ".join(names)
        return f"{names[0]} et al."

    @property
    def year_text(self) -> str:
        return f"{self.year}{self.year_suffix}" if self.year is not None else UNDATED

    @property
    def short(self) -> str:
        """How a page or the CLI cites it: ``Opitz & Burst 2019a``."""
        return f"{self.surnames} {self.year_text}"


REFERENCES: tuple[Reference, ...] = (
    Reference(
        key="opitz-overview",
        authors=("Juri Opitz",),
        title="From Bias and Prevalence to Macro F1, Kappa, and MCC: A structured overview of metrics "
        "for multi-class evaluation",
        year=2024,
        venue="arXiv preprint arXiv:2404.16958 (its first version, of 2024, is titled “A Closer Look at "
        "Classification Evaluation Metrics and a Critical Reflection of Common Evaluation Practice”)",
        url="https://arxiv.org/abs/2404.16958",
        provenance="Title, author and affiliation (Heidelberg University) from the text's first lines; the "
        "text states no year or address. Year and arXiv id from the arXiv record of the same work, whose "
        "later version carries this title; equation and table numbers follow the text used here.",
        note="Bias and prevalence, the properties PI–PV (Table 5), every overall metric of the suite, "
        "prevalence calibration (Eq. 5–6) and the SemEval-2017 study (Table 8, Figure 2).",
    ),
    Reference(
        key="opitz-burst-note",
        authors=("Juri Opitz", "Sebastian Burst"),
        title="Macro F1 and Macro F1",
        year=2019,
        year_suffix="a",
        venue="arXiv preprint arXiv:1911.03347",
        url="https://arxiv.org/abs/1911.03347",
        provenance="Title (subtitled “a note”) and authors from the note's first lines; year and arXiv id from "
        "its entry in the overview's references ([8]: “Macro f1 and macro f1. arXiv preprint arXiv:1911.03347, 2019”).",
        note="The two macro F1s (averaged F1, Eq. 2; F1 of averages, Eq. 3), the Theorem and the "
        "closed form of their gap (Lemma, Eq. 4).",
    ),
    Reference(
        key="opitz-burst-blog",
        authors=("Juri Opitz", "Sebastian Burst"),
        title="Macro F1 and macro F1",
        year=2019,
        year_suffix="b",
        venue="Blog post of 5 December 2019",
        provenance="Title, authors and date (“December 5th, 2019”) from the post's first lines. "
        "The text names no address.",
        note="Three worked examples of the two macro F1s (the product's tests reproduce them).",
    ),
    Reference(
        key="measures-table",
        authors=(),
        title="Performance measures",
        year=None,
        provenance="The text is one section, “1 Performance measures”; it names no title of its own, "
        "no authors, year, venue or address, so the section heading stands for the title.",
        note="Per-class (one-vs-rest) precision, recall, F, MCC, balanced accuracy and discriminant "
        "power (Table 1), and their micro-weighted (Table 2) and macro-weighted (Table 3) averages "
        "with class weights ω.",
    ),
    Reference(
        key="semeval2017-task4",
        authors=("Sara Rosenthal", "Noura Farra", "Preslav Nakov"),
        title="SemEval-2017 Task 4: Sentiment Analysis in Twitter",
        year=2017,
        venue="Proceedings of the 11th International Workshop on Semantic Evaluation (SemEval-2017), pages 502–518",
        provenance="Authors, title, venue, pages and year as the overview cites it (its reference [11]); the "
        "text itself is not among the papers used here, so the formulas follow the issue that quotes it.",
        note="Subtask C, sentiment on a five-point scale: the macro-averaged mean absolute error MAE^M "
        "(its official measure) and the plain MAE^µ.",
    ),
    Reference(
        key="koehn-2004",
        authors=("Philipp Koehn",),
        title="Statistical Significance Tests for Machine Translation Evaluation",
        year=2004,
        venue="Proceedings of the 2004 Conference on Empirical Methods in Natural Language Processing (EMNLP), "
        "pages 388–395",
        provenance="Not among the papers used here: from the public record of the work.",
        note="Paired bootstrap resampling: two systems scored on the same resampled test sets, and the share "
        "of resamples in which one is better as the evidence that it is.",
    ),
    Reference(
        key="holm-1979",
        authors=("Sture Holm",),
        title="A Simple Sequentially Rejective Multiple Test Procedure",
        year=1979,
        venue="Scandinavian Journal of Statistics 6(2), pages 65–70",
        provenance="Not among the papers used here: from the public record of the work.",
        note="The step-down procedure that keeps the family-wise error rate at the chosen level under any "
        "dependence between the tests.",
    ),
    Reference(
        key="davison-hinkley-1997",
        authors=("Anthony C. Davison", "David V. Hinkley"),
        title="Bootstrap Methods and their Application",
        year=1997,
        venue="Cambridge University Press",
        provenance="Not among the papers used here: from the public record of the work.",
        note="Monte Carlo p-values (1 + count) / (1 + B), which are never 0 and keep a test's level.",
    ),
    Reference(
        key="semeval2018-task1",
        authors=("Saif M. Mohammad", "Felipe Bravo-Marquez", "Mohammad Salameh", "Svetlana Kiritchenko"),
        title="SemEval-2018 Task 1: Affect in Tweets",
        year=2018,
        venue="Proceedings of the 12th International Workshop on Semantic Evaluation (SemEval-2018), pages 1–17",
        provenance="Not among the papers used here: from the public record of the work.",
        note="Subtask E-c, which of 11 emotions a tweet expresses (any number): ranked by the Jaccard index of "
        "the predicted and gold label sets averaged over tweets, with micro and macro F1 beside it.",
    ),
    Reference(
        key="semeval2019-task5",
        authors=("Valerio Basile", "Cristina Bosco", "Elisabetta Fersini", "Debora Nozza", "Viviana Patti"),
        title="SemEval-2019 Task 5: Multilingual Detection of Hate Speech Against Immigrants and Women in Twitter",
        year=2019,
        venue="Proceedings of the 13th International Workshop on Semantic Evaluation (SemEval-2019), pages 54–63",
        provenance="Not among the papers used here: from the public record of the work.",
        note="HatEval, subtask B: three 0/1 columns a tweet (hate speech, target, aggressiveness), ranked by the "
        "mean over the columns of each column's macro F1, with the exact match ratio beside it.",
    ),
)

BY_KEY: dict[str, Reference] = {reference.key: reference for reference in REFERENCES}

CITATION = re.compile("@(" + "|".join(re.escape(key) for key in sorted(BY_KEY, key=len, reverse=True)) + r")(?![\w-])")
"""``@key`` of a listed reference. Only listed keys are citations: any other ``@`` (in a class
label, say) stays text, and a test checks that no registry string holds an ``@`` that is not
one."""


def get(key: str) -> Reference:
    """The reference registered under ``key``; ``KeyError`` names the known keys."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown reference {key!r}; known: {', '.join(BY_KEY)}") from None


def parts(text: str) -> Iterator[str | Reference]:
    """``text`` as its plain stretches and the references it cites, in order."""
    start = 0
    for match in CITATION.finditer(text):
        if match.start() > start:
            yield text[start : match.start()]
        yield BY_KEY[match.group(1)]
        start = match.end()
    if start < len(text):
        yield text[start:]


def plain(text: str) -> str:
    """``text`` with each citation written out: ``"@opitz-overview, Eq. 7"`` → ``"Opitz 2024, Eq. 7"``."""
    return "".join(part if isinstance(part, str) else part.short for part in parts(text))


def cited(texts: Iterable[str]) -> list[Reference]:
    """The references that ``texts`` cite, each once, in the order of :data:`REFERENCES`."""
    keys = {part.key for text in texts for part in parts(text) if isinstance(part, Reference)}
    return [reference for reference in REFERENCES if reference.key in keys]


class Citing(Protocol):
    """A registry entry as far as citations go: its name and the texts that may cite."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def properties_source(self) -> str: ...
    @property
    def description(self) -> str: ...


def cited_by(entries: Iterable[Citing]) -> dict[str, list[str]]:
    """Each reference's key → the names of the entries whose source, properties source or
    description cite it, in the entries' order (a reference no entry cites maps to ``[]``)."""
    names: dict[str, list[str]] = {reference.key: [] for reference in REFERENCES}
    for entry in entries:
        for reference in cited((entry.source, entry.properties_source, entry.description)):
            names[reference.key].append(entry.name)
    return names
