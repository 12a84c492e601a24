"""The references page: the texts the metrics come from, each with an anchor that the metric
pages' citations link to (``/references/#opitz-overview``)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from scoring.engine.references import REFERENCES, cited_by
from scoring.engine.registry import CLASS_MEASURES, METRICS


@require_safe
def references(request: HttpRequest) -> HttpResponse:
    """Every reference, with the metrics and per-class measures whose registry entry cites it."""
    metrics, measures = cited_by(METRICS), cited_by(CLASS_MEASURES)
    entries = [(reference, metrics[reference.key], measures[reference.key]) for reference in REFERENCES]
    return render(request, "leaderboard/references.html", {"entries": entries})
