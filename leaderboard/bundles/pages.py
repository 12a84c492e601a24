"""A competition's pages (HTML on CodaLab, HTML or Markdown on Codabench) as the plain text this
site shows: a task's description and terms are text, escaped on every page, so nothing of a
page can run here.

HTML is read with the standard library's parser into readable text with Markdown's marks:
headings as ``#`` lines, list items as ``-``, paragraphs and line breaks kept, a link as its
text followed by its address (http, https and mailto only), tables a row a line. Scripts,
styles, frames, forms and embedded objects are dropped with their content; entities are
decoded; control and direction-override characters are removed. Markdown is kept as it is
written (it reads as text), with the same characters removed.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

DROPPED = frozenset(
    {
        "script",
        "style",
        "head",
        "title",
        "iframe",
        "object",
        "embed",
        "noscript",
        "template",
        "svg",
        "math",
        "form",
        "select",
        "textarea",
        "button",
    }
)
BLOCKS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "table",
        "ul",
        "ol",
        "dl",
        "pre",
        "hr",
        "figure",
        "main",
        "nav",
        "aside",
    }
)
ROW_ENDS = frozenset({"tr", "dt", "dd"})
HEADINGS = {f"h{level}": "#" * level for level in range(1, 7)}
SAFE_LINK = re.compile(r"^(https?://|mailto:)", re.IGNORECASE)
HIDDEN = re.compile("[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
MAX_PAGE_CHARACTERS = 200_000


class _TextOfHtml(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.dropping = 0
        self.pre = 0
        self.links: list[str | None] = []

    def _break(self, count: int = 2) -> None:
        self.parts.append("\n" * count)

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in DROPPED:
            self.dropping += 1
            return
        if self.dropping:
            return
        if tag in HEADINGS:
            self._break()
            self.parts.append(HEADINGS[tag] + " ")
        elif tag == "li":
            self._break(1)
            self.parts.append("- ")
        elif tag == "br" or tag in ROW_ENDS:
            self._break(1)
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag in BLOCKS:
            self._break()
        if tag == "pre":
            self.pre += 1
        if tag == "a":
            href = dict(attrs).get("href") or ""
            self.links.append(href if SAFE_LINK.match(href.strip()) else None)
        if tag == "img":
            alt = (dict(attrs).get("alt") or "").strip()
            if alt:
                self.parts.append(f"[image: {alt}]")

    def handle_endtag(self, tag: str) -> None:
        if tag in DROPPED:
            self.dropping = max(0, self.dropping - 1)
            return
        if self.dropping:
            return
        if tag == "a" and self.links:
            href = self.links.pop()
            if href:
                self.parts.append(f" ({href.strip()})")
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in HEADINGS or tag in BLOCKS:
            self._break()

    def handle_data(self, data: str) -> None:
        if self.dropping:
            return
        self.parts.append(data if self.pre else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        lines = [line.strip() for line in "".join(self.parts).splitlines()]
        text = "\n".join(lines)
        return re.sub(r"\n{3,}", "\n\n", text).strip()


def clean_text(text: str) -> str:
    """Text without control or direction-override characters, its line ends made ``\\n``."""
    return HIDDEN.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))[:MAX_PAGE_CHARACTERS].strip()


def text_of_html(html: str) -> str:
    parser = _TextOfHtml()
    parser.feed(html)
    parser.close()
    return clean_text(parser.text())


def page_text(content: bytes, *, name: str) -> str:
    """A page's bytes as text: HTML (by its name, or by its first tag) read as above, anything
    else (Markdown, text) as it is."""
    text = content.decode("utf-8-sig", errors="replace")
    looks_html = name.lower().endswith((".html", ".htm")) or text.lstrip()[:1] == "<"
    return text_of_html(text) if looks_html else clean_text(text)
