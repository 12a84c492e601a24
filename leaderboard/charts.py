"""Plotly figures, built in Python and drawn by plotly.js: the rank-correlation heatmap and the
rank chart of the disagreement page, and a submission's confusion matrices.

Each function returns the figure as JSON; a template embeds it with ``json_script`` next to a
``<div data-figure="ID">`` and ``static/leaderboard/charts.js`` draws it (and saves it as PNG or
SVG); :func:`standalone_html` makes a figure a file of its own that opens offline. Nothing here
points outside the site: the figures use the empty ``"none"`` template and a system font stack,
so no web font, MathJax or topojson URL ends up in a page. Plotly renders a small HTML subset in
labels and hover text, so every name that comes from a user (team names, class labels) is
HTML-escaped before it goes in; plotly turns the entities back into the literal characters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pandas  # noqa: F401 -- plotly imports it on a figure's first use; here, it is imported once, at start-up
import plotly
import plotly.graph_objects as go
import plotly.io as pio
from django.utils.html import escape

from leaderboard.stability import Intervals
from scoring.engine import ranking
from scoring.engine.columns import Column
from scoring.engine.formatting import mass_text, rho_text, value_text
from scoring.engine.metrics import Value

FONT_FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
GRID_COLOUR = "#e5e7eb"
MAX_CELLS_WITH_TEXT = 24
"""Above this many columns the heatmap's cells are too small to print rho in them."""

DIVERGING = [
    [0.0, "#b2182b"],
    [0.25, "#ef8a62"],
    [0.5, "#f7f7f7"],
    [0.75, "#67a9cf"],
    [1.0, "#2166ac"],
]
"""Red for rankings in opposite order, white for no relation, blue for the same order."""

STANDALONE_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>body {{ font-family: {font}; color: #1f2937; margin: 1.5rem; }} h1 {{ font-size: 1.25rem; }}
p {{ color: #4b5563; }}</style>
</head>
<body>
<h1>{title}</h1>
<p>{note}</p>
{figure}
</body>
</html>
"""
"""The document around a downloaded figure: its title and a line saying what it shows."""


CALIBRATED_TICK = "{symbol} cal."
"""An axis label of a calibrated column: said in words, not only by the ``_c`` of its symbol."""
TOP_TEAMS_SHOWN = 10
"""How many lines the rank chart draws at first (the leaders under the ordering column); the page
offers more, and the visitor's own team."""


def axis_label(column: Column) -> str:
    """A column's axis label: its symbol, calibrated ones as ``macR cal.``."""
    if column.calibrated:
        return escape(CALIBRATED_TICK.format(symbol=column.counterpart().symbol))
    return escape(column.symbol)


def _hover_name(column: Column) -> str:
    """A column as hover text names it: ``macR`` or ``macR, calibrated`` (short: the all-metrics
    heatmap holds two names per cell, thousands of cells)."""
    symbol = escape(column.counterpart().symbol if column.calibrated else column.symbol)
    return f"{symbol}, calibrated" if column.calibrated else symbol


def _layout(**options) -> dict:
    layout = {
        "template": "none",
        "font": {"family": FONT_FAMILY, "size": 12, "color": "#1f2937"},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "hoverlabel": {"font": {"family": FONT_FAMILY}},
    }
    layout.update(options)
    return layout


def _tick_angle(columns: Sequence[object]) -> int:
    """Slanted axis labels, upright when there are too many to fit slanted."""
    return -45 if len(columns) <= MAX_CELLS_WITH_TEXT else -90


def _rho_interval_text(intervals: Intervals | None, first: Column, second: Column) -> str:
    """The hover's line about rho's bootstrap interval ("" when the page shows none)."""
    if intervals is None or not intervals.shown:
        return ""
    bounds = intervals.rho(first, second)
    text = "undefined" if bounds is None else f"[{rho_text(bounds[0])}, {rho_text(bounds[1])}]"
    return f"<br>95% interval {text}" + (" (previous scores; being recomputed)" if intervals.stale else "")


def rho_cell_text(rho: float | None) -> str:
    """A heatmap cell's rho in at most five characters: two decimals, and ``>.99`` (``<-.99``)
    for a rho that two decimals would show as 1.00 (-1.00) but is not; hover gives it whole."""
    if rho is None:
        return ""
    text = rho_text(rho)
    if len(text.lstrip("-")) <= 4:
        return text
    return ">.99" if rho > 0 else "<-.99"


def correlation_heatmap(
    *,
    columns: Sequence[Column],
    matrix: Mapping[str, Mapping[str, ranking.Correlation]],
    intervals: Intervals | None = None,
) -> str:
    """Spearman's rho between the team rankings of every pair of columns (paper 000, Fig. 2).

    The colour scale is fixed to [-1, 1]; a cell whose rho is undefined stays blank and says
    so on hover. Hover also names the two metrics, the number of teams rho rests on and, when
    ``intervals`` has them, rho's 95 % paired-bootstrap interval.
    """
    labels = [axis_label(c) for c in columns]
    hover_names = [_hover_name(c) for c in columns]
    cells = [[matrix[row.id][col.id] for col in columns] for row in columns]
    z = [[cell.rho for cell in row] for row in cells]
    text = [[rho_cell_text(cell.rho) for cell in row] for row in cells]
    customdata = [
        [
            [
                hover_names[i],
                hover_names[j],
                rho_text(cell.rho),
                cell.n_teams,
                _rho_interval_text(intervals, columns[i], columns[j]),
            ]
            for j, cell in enumerate(row)
        ]
        for i, row in enumerate(cells)
    ]
    hovertemplate = (
        "<b>%{customdata[0]}</b> vs <b>%{customdata[1]}</b><br>"
        "ρ = %{customdata[2]}%{customdata[4]}<br>on %{customdata[3]} teams<extra></extra>"
    )
    return _square_heatmap(
        labels=labels,
        z=z,
        text=text,
        customdata=customdata,
        hovertemplate=hovertemplate,
        scale="ρ",
        axis_title="cal. = prevalence-calibrated",
    )


def _square_heatmap(
    *, labels: list[str], z: list, text: list, customdata: list, hovertemplate: str, scale: str, axis_title: str
) -> str:
    """A square heatmap of values in [-1, 1] between the same things on both axes (metrics,
    teams), red for -1, white for 0, blue for 1; a blank cell for an undefined value, which
    hover names; the values printed in the cells while they fit."""
    heatmap = {
        "type": "heatmap",
        "z": z,
        "x": labels,
        "y": labels,
        "zmin": -1.0,
        "zmax": 1.0,
        "zmid": 0.0,
        "colorscale": DIVERGING,
        "colorbar": {"title": {"text": scale}, "tickvals": [-1, -0.5, 0, 0.5, 1], "thickness": 14},
        "customdata": customdata,
        "hovertemplate": hovertemplate,
        "hoverongaps": True,
        "xgap": 1,
        "ygap": 1,
    }
    if len(labels) <= MAX_CELLS_WITH_TEXT:
        heatmap |= {"text": text, "texttemplate": "%{text}", "textfont": {"size": 10}}
    size = max(360, 34 * len(labels) + 140)
    every_label = {
        "type": "category",  # a team called "2017" is a name, not a number
        "tickmode": "array",
        "tickvals": labels,
        "ticktext": labels,
        "showgrid": False,
        "automargin": True,
    }
    layout = _layout(
        height=size,
        margin={"l": 110, "r": 20, "t": 20, "b": 110},
        xaxis={
            **every_label,
            "tickangle": _tick_angle(labels),
            "side": "bottom",
            "title": {"text": axis_title, "font": {"size": 11}},
        },
        yaxis={**every_label, "autorange": "reversed"},
    )
    return _unchecked_json([heatmap], layout)


def kappa_heatmap(*, teams: Sequence[str], kappa: Sequence[Sequence[Value]]) -> str:
    """Cohen's kappa between the labels of every two teams (:mod:`scoring.engine.analysis`), the
    teams in the order given (the clustering's, so that teams that agree sit together). Hover
    names both teams and says "undefined" where kappa is (two teams that give every item one
    same label)."""
    labels = [escape(team) for team in teams]
    z = [list(row) for row in kappa]
    customdata = [[[labels[i], labels[j], rho_text(value)] for j, value in enumerate(row)] for i, row in enumerate(z)]
    return _square_heatmap(
        labels=labels,
        z=z,
        text=[[rho_cell_text(value) for value in row] for row in z],
        customdata=customdata,
        hovertemplate="<b>%{customdata[0]}</b> vs <b>%{customdata[1]}</b><br>κ = %{customdata[2]}<extra></extra>",
        scale="κ",
        axis_title="teams in the order of their clustering (average linkage of 1 − κ)",
    )


def _without_none(options: dict) -> dict:
    """``options`` without its ``None`` values, nested dicts included (as plotly drops them)."""
    return {
        key: _without_none(value) if isinstance(value, dict) else value
        for key, value in options.items()
        if value is not None
    }


def rank_lines(
    *,
    columns: Sequence[Column],
    teams: Sequence[str],
    ranks: Mapping[str, Sequence[int | None]],
    values: Mapping[str, Sequence[Value]],
) -> str:
    """Each team's rank under each column: one line per team, rank 1 at the top.

    ``teams`` in the order their lines are drawn (the page draws the first few and offers the
    rest: ``charts.js``), ``ranks`` their competition ranks on the whole board (as the
    leaderboard shows them) and ``values`` their values, per column id; a team undefined under a
    column has no point there, and a team with no rank at all is left out. Each line carries the
    team's name unescaped in ``meta``.

    Built as plain dicts rather than graph objects: plotly's validation of every trace cost
    over a second for a few hundred; the figure is the same.
    """
    labels = [axis_label(c) for c in columns]
    order = range(len(teams))
    traces = []
    for index in order:
        team = teams[index]
        team_ranks = [ranks[c.id][index] for c in columns]
        if all(rank is None for rank in team_ranks):
            continue
        name = escape(team)
        value_texts = [value_text(values[c.id][index]) for c in columns]
        traces.append(
            {
                "connectgaps": False,
                "customdata": [[name, text] for text in value_texts],
                "hovertemplate": "<b>%{customdata[0]}</b><br>%{x}: rank %{y}<br>value %{customdata[1]}<extra></extra>",
                "meta": team,
                "mode": "lines+markers",
                "name": name,
                "x": labels,
                "y": team_ranks,
                "type": "scatter",
            }
        )
    n_ranked = max(len(traces), 1)
    layout = _layout(
        height=max(360, 22 * n_ranked + 220),
        margin={"l": 60, "r": 20, "t": 20, "b": 110},
        xaxis={
            "tickmode": "array",
            "tickvals": labels,
            "ticktext": labels,
            "tickangle": _tick_angle(columns),
            "automargin": True,
            "showgrid": True,
            "gridcolor": GRID_COLOUR,
        },
        yaxis={
            "autorange": "reversed",
            "title": {"text": "rank (1 = best)"},
            "dtick": 1 if n_ranked <= 30 else None,
            "gridcolor": GRID_COLOUR,
            "zeroline": False,
        },
        legend={"title": {"text": "team"}},
        hovermode="closest",
    )
    return _unchecked_json(traces, _without_none(layout))


def _unchecked_json(traces: list[dict], layout: dict) -> str:
    """A figure's JSON as plotly writes it, from traces and a layout built here: plotly's own
    objects check every cell of a trace (a heatmap of 46 columns has 2,116 cells, each with its
    hover data: a tenth of a second on a page's first read), which these need not."""
    layout["template"] = pio.templates[layout["template"]].to_plotly_json()
    return pio.to_json({"data": traces, "layout": layout}, validate=False)


def confusion_heatmap(matrix: Sequence[Sequence[float]] | None, labels: Sequence[str], *, title: str) -> str | None:
    """A confusion matrix with predictions on the y axis and gold labels on the x axis, as in
    the papers' tables (rows predicted, columns gold); each cell shows its count or mass."""
    if matrix is None:
        return None
    text = [[mass_text(x) for x in row] for row in matrix]
    figure = go.Figure(
        go.Heatmap(
            z=matrix,
            x=[f"gold {escape(label)}" for label in labels],
            y=[f"predicted {escape(label)}" for label in labels],
            text=text,
            texttemplate="%{text}",
            hovertemplate="%{y}, %{x}: %{text}<extra></extra>",
            colorscale="Blues",
            showscale=False,
        ),
        layout=_layout(
            title={"text": title},
            # automargin: a class name at the edge must not stick out of the chart on a phone
            xaxis={"automargin": True},
            yaxis={"autorange": "reversed", "automargin": True},
            margin={"l": 120, "r": 10, "t": 40, "b": 60},
            height=120 + 60 * len(labels),
        ),
    )
    return figure.to_json()


PLOTLY_VERSION = plotly.__version__
"""The version of plotly.js inside :func:`standalone_html`'s files (a copy kept from another one is stale)."""


def standalone_html(figure: str, *, title: str, note: str, filename: str) -> str:
    """A figure (JSON, as built above) as one HTML file that works offline: plotly.js inlined
    from the pinned ``plotly`` package (the bundle the site serves), no script loaded from
    anywhere, the figure drawn as on the page. ``filename`` names the PNG of its camera button.
    """
    body = pio.to_html(
        json.loads(figure),
        config={
            "displaylogo": False,
            "responsive": True,
            "typesetMath": False,
            "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2},
        },
        include_plotlyjs=True,
        include_mathjax=False,
        full_html=False,
        validate=False,
        div_id="figure",  # the file is the same for the same figure (plotly's own id is random)
    )
    return STANDALONE_PAGE.format(title=escape(title), note=escape(note), font=FONT_FAMILY, figure=body)


def prepare() -> None:
    """Draw one small figure of each kind, as a web process does before its first request
    (:mod:`leaderboard.startup`): plotly loads a trace type's classes and checks when one is first
    drawn, more than half a second that would otherwise fall on a visitor."""
    figure = kappa_heatmap(teams=["a", "b"], kappa=[[1.0, 0.5], [0.5, 1.0]])
    confusion_heatmap([[1, 0], [0, 1]], ["a", "b"], title="")
    rank_lines(columns=[], teams=[], ranks={}, values={})
    standalone_html(figure, title="", note="", filename="figure")
