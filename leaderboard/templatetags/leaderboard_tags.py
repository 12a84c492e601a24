"""Template filters and tags: thin names for :mod:`leaderboard.formatting`, so a page renders
values, ranks and marks exactly as the board's row builder does; a registry formula as MathML
(:mod:`leaderboard.mathml`); and citations linked to the references page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

from leaderboard import formatting, mathml
from scoring.engine import references

register = template.Library()

register.filter("metric_value", formatting.value_html)
register.filter("mass", formatting.mass_html)
register.filter("rho", formatting.rho_html)
register.filter("property_mark", formatting.property_mark)
register.simple_tag(formatting.rank_badge, name="rank_badge")
register.simple_tag(formatting.shift_arrow, name="shift_arrow")
register.simple_tag(formatting.rank_interval_html, name="rank_interval")
register.filter("score_interval", formatting.score_interval_text)
register.filter("formula_mathml", mathml.formula_mathml)
register.filter("cite_plain", references.plain)


@register.filter
def cite(text: str) -> SafeString:
    """A registry string (or a template's literal) with each ``@key`` citation written as
    ``Opitz & Burst 2019a`` and linked to its entry on the references page; the rest escaped."""
    page = reverse("leaderboard:references")
    return mark_safe(
        "".join(
            conditional_escape(part)
            if isinstance(part, str)
            else format_html('<a class="cite" href="{}#{}">{}</a>', page, part.key, part.short)
            for part in references.parts(text)
        )
    )


@register.filter
def get_item(mapping: Mapping | None, key: Any) -> Any:
    """``mapping[key]`` in a template, or None when the mapping or the key is missing."""
    if not mapping:
        return None
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.simple_tag(takes_context=True)
def organiser_banner(context, phase) -> str:
    """On a page of a phase whose results are still hidden, a banner for its organisers: what
    they see here, participants do not (yet)."""
    request = context.get("request")
    if request is None or phase is None or phase.results_public() or not phase.task.is_organiser(request.user):
        return ""
    return formatting.organiser_banner(phase.name, phase.closes_at, phase.get_feedback_display())
