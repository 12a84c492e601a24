"""Template filters and tags: thin names for :mod:`leaderboard.formatting`, so a page renders
values, ranks and marks exactly as the board's row builder does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from leaderboard import formatting

register = template.Library()

register.filter("metric_value", formatting.value_html)
register.filter("mass", formatting.mass_html)
register.filter("property_mark", formatting.property_mark)
register.simple_tag(formatting.rank_badge, name="rank_badge")
register.simple_tag(formatting.shift_arrow, name="shift_arrow")


@register.filter
def get_item(mapping: Mapping | None, key: Any) -> Any:
    """``mapping[key]`` in a template, or None when the mapping or the key is missing."""
    if not mapping:
        return None
    try:
        return mapping.get(key)
    except AttributeError:
        return None
