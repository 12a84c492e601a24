"""How a value reads as text: the one place that formats metric values, counts, ranks and
correlations for the CLI, the pages, the charts and the exports.

Undefined values (``None``, NaN, infinities, anything that is not a number) read as
"undefined", never as "nan", "inf" or an empty string; a value that rounds to zero never reads
as "-0.0000".
"""

from __future__ import annotations

import math
from typing import Any

UNDEFINED = "undefined"
NO_RANK = "–"
VALUE_DIGITS = 4
RHO_DIGITS = 2
MASS_DIGITS = 4


def as_number(value: Any) -> float | None:
    """A finite number as a float, or ``None`` for anything undefined (None, NaN, inf, text)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def fixed(number: float, digits: int) -> str:
    """Fixed-point text without a negative zero."""
    text = f"{number:.{int(digits)}f}"
    return text.lstrip("-") if float(text) == 0 else text


def value_text(value: Any, digits: int = VALUE_DIGITS) -> str:
    """A metric value: ``0.6812``, an int as it is, or ``undefined``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    number = as_number(value)
    return UNDEFINED if number is None else fixed(number, digits)


def rho_text(rho: Any) -> str:
    """A rank correlation: two decimals, or ``undefined``; a rho that is not exactly 1 (or -1)
    gets the decimals it needs not to read as one (0.997, not 1.00: two rankings that differ
    must not look identical)."""
    number = as_number(rho)
    if number is None:
        return UNDEFINED
    digits = RHO_DIGITS
    while abs(number) != 1 and abs(float(fixed(number, digits))) == 1 and digits < 17:
        digits += 1
    return fixed(number, digits)


def mass_text(value: Any, digits: int = MASS_DIGITS) -> str:
    """A count or a soft (probability) mass: ``3,972`` when integral, else rounded to
    ``digits`` decimals (a soft mass of 3971.9999999998 reads ``3,972.0000``)."""
    number = as_number(value)
    if number is None:
        return UNDEFINED
    return f"{number:,.0f}" if number.is_integer() else f"{number:,.{digits}f}"


def rank_text(rank: int | None) -> str:
    """A rank, or a dash for no rank (undefined value, or not ranked)."""
    return NO_RANK if rank is None else str(rank)


def json_value(value: Any) -> float | int | None:
    """A value for JSON: the number, or ``None`` (``null``) when undefined."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return as_number(value)
