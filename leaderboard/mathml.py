"""The registry's LaTeX formulas as MathML, made on the server: a page needs no script and no
CDN to show them as mathematics (browsers render MathML Core natively).

Only the registry's own formulas are converted (:data:`FORMULAS`): latex2mathml's output is
marked safe because its input is a constant of our code, never a string a visitor sent. The
LaTeX travels along as the MathML annotation, so copying the formula still gives its source.
"""

from __future__ import annotations

import functools
from xml.sax.saxutils import escape

from django.utils.safestring import SafeString, mark_safe
from latex2mathml.converter import convert

from scoring.engine.registry import CLASS_MEASURES, ITEM_METRICS, METRICS, ORDINAL_METRICS, ClassMeasure, Metric

FORMULAS: frozenset[str] = frozenset(
    entry.formula_latex for entry in (*METRICS, *ORDINAL_METRICS, *ITEM_METRICS, *CLASS_MEASURES) if entry.formula_latex
)
"""Every LaTeX formula of the registry: the only strings this module converts."""

NOT_A_REGISTRY_FORMULA = "only the registry's own formulas are converted to MathML"

_MATH_OPEN = '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">'


@functools.cache
def latex_to_mathml(latex: str) -> SafeString:
    """A registry formula as block MathML; ``ValueError`` for any other string (never cached,
    so the cache holds at most one entry per registry formula).

    latex2mathml's ``<math>`` keeps its content in one ``<mrow>`` inside ``<semantics>``, with
    the LaTeX as annotation (not rendered by browsers, kept for copying and assistive tools).
    """
    if latex not in FORMULAS:
        raise ValueError(NOT_A_REGISTRY_FORMULA)
    converted = convert(latex, display="block")
    if not (converted.startswith(_MATH_OPEN) and converted.endswith("</math>")):
        raise ValueError(f"unexpected MathML for {latex!r}: {converted[:80]}")
    inner = converted[len(_MATH_OPEN) : -len("</math>")]
    annotation = f'<annotation encoding="application/x-tex">{escape(latex)}</annotation>'
    # Safe: converted from a registry constant (FORMULAS), never from a visitor's input.
    return mark_safe(f"{_MATH_OPEN}<semantics><mrow>{inner}</mrow>{annotation}</semantics></math>")


def formula_mathml(entry: Metric | ClassMeasure) -> SafeString:
    """The formula of a registry entry as MathML; empty if it has none."""
    return latex_to_mathml(entry.formula_latex) if entry.formula_latex else SafeString("")
