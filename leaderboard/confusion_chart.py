"""The confusion-matrix heatmap of a submission page (plotly figure as JSON)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from django.utils.html import escape


def confusion_heatmap(matrix: Sequence[Sequence[float]] | None, labels: Sequence[str], *, title: str) -> str | None:
    """A heatmap with predictions on the y axis and gold labels on the x axis, as in the
    papers' tables (rows predicted, columns gold); each cell shows its value.
    """
    if matrix is None:
        return None
    integral = all(float(x).is_integer() for row in matrix for x in row)
    text = [[f"{x:,.0f}" if integral else f"{x:.4f}" for x in row] for row in matrix]
    figure = go.Figure(
        go.Heatmap(
            z=matrix,
            # plotly renders a few HTML tags in text: labels come from organisers, so escape them.
            x=[f"gold {escape(label)}" for label in labels],
            y=[f"predicted {escape(label)}" for label in labels],
            text=text,
            texttemplate="%{text}",
            hovertemplate="%{y}, %{x}: %{text}<extra></extra>",
            colorscale="Blues",
            showscale=False,
        )
    )
    figure.update_layout(
        title={"text": title},
        yaxis={"autorange": "reversed"},
        margin={"l": 120, "r": 10, "t": 40, "b": 60},
        height=120 + 60 * len(labels),
    )
    return figure.to_json()
