"""What several of the Django tests build the same way: prediction files, teams that upload
them, the figures a page embeds."""

from __future__ import annotations

import json
import re

from leaderboard.models import Task
from leaderboard.services.teams import team_create


def prediction_file(labels: str) -> bytes:
    rows = [f"{i},{label}" for i, label in enumerate(labels.split(), start=1)]
    return ("id,label\n" + "\n".join(rows) + "\n").encode()


def teams_upload(task: Task, predictions: dict[str, str], *, make_user, submit) -> None:
    """A team per name (its member ``member0``, ``member1``, ...), each uploading its labels."""
    for index, (name, labels) in enumerate(predictions.items()):
        user = make_user(f"member{index}")
        team_create(task=task, user=user, name=name)
        submit(task, user, prediction_file(labels))


def embedded_figure(content: str, element_id: str) -> dict:
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', content, flags=re.S)
    assert match, f"no figure {element_id}"
    figure = json.loads(match.group(1))
    return json.loads(figure) if isinstance(figure, str) else figure
