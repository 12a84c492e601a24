"""Template filters for metric values, ranks and dictionary look-ups.

``metric_value`` is the one place a page turns a stored value into text: four decimals, or a
visible "undefined" (DESIGN.md: never NaN, never inf, never a blank cell).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django import template
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

UNDEFINED = "undefined"
UNDEFINED_HTML = mark_safe(f'<span class="undefined">{UNDEFINED}</span>')


def _as_number(value: Any) -> float | None:
    """A finite number, or None for anything undefined (None, NaN, inf)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _fixed(number: float, decimals: int) -> str:
    """Fixed-point text; a value that rounds to zero never shows as "-0.0000"."""
    text = f"{number:.{int(decimals)}f}"
    return text.lstrip("-") if float(text) == 0 else text


@register.filter
def metric_text(value: Any, decimals: int = 4) -> str:
    """A value as plain text: ``0.6812`` or ``undefined`` (for attributes and exports)."""
    number = _as_number(value)
    return UNDEFINED if number is None else _fixed(number, decimals)


@register.filter
def metric_value(value: Any, decimals: int = 4) -> SafeString | str:
    """A value for a page: four decimals, or "undefined" in muted italic.

    Anything that is not a number (a string slipped into a score dict) is escaped and shown
    as it is rather than formatted.
    """
    if isinstance(value, str):
        return conditional_escape(value)
    number = _as_number(value)
    if number is None:
        return UNDEFINED_HTML
    return _fixed(number, decimals)


@register.filter
def get_item(mapping: Mapping | None, key: Any) -> Any:
    """``mapping[key]`` in a template, or None when the mapping or the key is missing."""
    if not mapping:
        return None
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.simple_tag
def rank_badge(rank: int | None) -> SafeString:
    """A team's rank as a badge (podium places coloured), or nothing when it has none."""
    if rank is None:
        return mark_safe('<span class="rank rank-none" title="no rank: undefined">–</span>')
    podium = f" rank-{rank}" if rank <= 3 else ""
    return format_html('<span class="rank{}" title="rank {}">{}</span>', podium, rank, rank)


@register.filter
def property_mark(holds: bool | None) -> SafeString:
    """A property of Table 5 (paper 000): holds, does not hold, or not analysed."""
    if holds is None:
        return mark_safe('<span class="prop prop-unknown">not analysed</span>')
    if holds:
        return mark_safe('<span class="prop prop-yes">✓ holds</span>')
    return mark_safe('<span class="prop prop-no">✗ does not hold</span>')


@register.simple_tag
def shift_arrow(shift: int | None) -> SafeString:
    """A rank move: ▲ up (better under the second metric), ▼ down, = unchanged."""
    if shift is None:
        return mark_safe('<span class="shift shift-none">–</span>')
    if shift > 0:
        return format_html('<span class="shift shift-up" title="climbs {} places">▲ {}</span>', shift, shift)
    if shift < 0:
        return format_html('<span class="shift shift-down" title="drops {} places">▼ {}</span>', -shift, -shift)
    return mark_safe('<span class="shift shift-same" title="same place">=</span>')
