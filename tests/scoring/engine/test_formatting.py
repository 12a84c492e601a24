"""How values read as text (scoring/engine/formatting.py), the one module the CLI, the pages,
the charts and the exports format with: undefined is "undefined", never "nan" or "-0.0000", and
a rank correlation that is not exactly 1 never reads as 1."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine.formatting import json_value, mass_text, rank_text, rho_text, value_text
from tests.scoring.strategies import PROPERTY


@pytest.mark.parametrize("undefined", [None, math.nan, math.inf, -math.inf, "0.5", True])
def test_anything_undefined_reads_undefined(undefined):
    assert value_text(undefined) == rho_text(undefined) == mass_text(undefined) == "undefined"
    assert json_value(undefined) is None


def test_values_have_four_decimals_and_no_negative_zero():
    assert value_text(0.68126) == "0.6813"
    assert value_text(-0.00001) == "0.0000"
    assert value_text(7) == "7"


@pytest.mark.parametrize(
    ("rho", "text"),
    [
        (1.0, "1.00"),
        (-1.0, "-1.00"),
        (0.994, "0.99"),
        (0.996, "0.996"),
        (0.9974, "0.997"),
        (0.99996, "0.99996"),
        (-0.9951, "-0.995"),
        (0.5, "0.50"),
        (-0.001, "0.00"),
    ],
)
def test_a_rho_that_is_not_one_never_reads_as_one(rho, text):
    assert rho_text(rho) == text


@PROPERTY
@given(st.floats(min_value=-1, max_value=1))
def test_rho_text_reads_one_exactly_when_rho_is_one(rho):
    shown = float(rho_text(rho))
    assert (abs(shown) == 1) == (abs(rho) == 1)
    assert abs(shown - rho) <= 0.005


def test_masses_and_ranks():
    assert mass_text(3972) == "3,972"
    assert mass_text(3971.99999) == "3,972.0000"  # a soft mass, never read as the count 3,972
    assert rank_text(None) == "–" and rank_text(12) == "12"
