"""The shapes of the API's answers (pydantic, via django-ninja), which the OpenAPI schema
describes. Undefined values are ``null``, never NaN."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ninja import Schema
from pydantic import Field

Number = float | int | None


class ErrorOut(Schema):
    code: str = Field(description="a stable name of the problem, e.g. DAILY_LIMIT or RESULTS_HIDDEN")
    message: str = Field(description="what went wrong, in words a person can act on")
    problems: list[dict[str, str | None]] | None = Field(None, description="each problem: field, code, message")


class PhaseOut(Schema):
    slug: str
    name: str
    counting: str
    visibility: str
    feedback: str
    opens_at: dt.datetime
    closes_at: dt.datetime
    max_per_day: int
    max_total: int
    contrastive_runs: int
    is_open: bool = Field(description="the phase takes uploads now: its dates, and its gold file given")
    results_public: bool
    waits_for_gold: bool = Field(
        description="the phase has no gold file yet: no upload, no leaderboard until its organisers give it"
    )


class OutputOut(Schema):
    name: str
    labels: list[str]


class TaskOut(Schema):
    slug: str
    title: str
    parent: str | None = Field(description="the task this one is a subtask of (its teams and registration), if any")
    subtasks: list[str] = Field(description="the slugs of its subtasks, if it has any (it then has no phases)")
    labels: list[str] = Field(description="the labels of its one label column (none for a task of several outputs)")
    outputs: list[OutputOut] = Field(
        description="a task with several labels an item: its outputs, one column each in its files (an output of 0 "
        "and 1 is a label of a multi-label task); empty for a task of one label column"
    )
    primary_metric: str
    phase: str | None = Field(description="the current phase: the one open now, else the latest to have opened")
    counting: str | None = Field(description="of the current phase")
    visibility: str | None = Field(description="of the current phase")
    feedback: str | None = Field(description="of the current phase")
    opens_at: dt.datetime | None = Field(description="of the current phase")
    closes_at: dt.datetime | None = Field(description="of the current phase")
    max_per_day: int | None = Field(description="of the current phase")
    max_total: int | None = Field(description="of the current phase")
    contrastive_runs: int | None = Field(description="of the current phase: contrastive runs a team may mark")
    is_open: bool | None = Field(description="the current phase takes uploads now")
    results_public: bool | None = Field(description="the current phase's board is public")
    waits_for_gold: bool | None = Field(description="the current phase waits for its gold file")
    phases: list[PhaseOut] = Field(description="every phase, in time order")
    teams: int
    url: str = Field(description="the task's page")


class SubmissionSummary(Schema):
    id: int
    phase: str
    status: str
    created_at: dt.datetime
    file_name: str
    description: str
    primary: str | None = Field(description="the primary score as the feedback policy shows it; null: not shown")
    counts: bool = Field(description="the submission that counts for its team on the board")


class YouOut(Schema):
    team: str | None
    is_organiser: bool
    board_visible: bool
    feedback: str = Field(description="all, full, primary or validated: what you see of your team's scores")
    submissions: list[SubmissionSummary]
    quota: dict[str, int | dt.datetime] | None = None


class TaskDetailOut(TaskOut):
    description: str
    you: YouOut


class ColumnOut(Schema):
    id: str = Field(description="names the column in ?sort= and in every export, e.g. macro_f1 or recall[neutral]_c")
    metric: str
    class_: str | None = Field(alias="class", description="the class of a per-class column")
    name: str
    symbol: str
    calibrated: bool
    formula: str
    over: list[str] | None = Field(None, description="an overall ranking's columns (their ids)")


class BoardTaskOut(Schema):
    slug: str
    title: str
    parent: str | None = Field(description="the task this board's task is a subtask of, if any")
    labels: list[str]
    primary_metric: str
    counting: str


class BoardRowOut(Schema):
    name: str
    kind: str = Field(
        description="team, contrastive (a team's contrastive run, after its row), baseline, or majority_vote and "
        "oracle (the teams' runs together: /api/tasks/{slug}/analysis): only teams are ranked"
    )
    status: str
    submission: int | None
    values: dict[str, Number]
    ranks: dict[str, int | None] = Field(description="competition ranks (1, 2, 2, 4); null when undefined")


class BoardPhaseOut(Schema):
    slug: str
    name: str
    opens_at: str
    closes_at: str
    counting: str
    gold_version: int
    part: str = Field(description="what the board is computed on: all, public or private (a split test set)")
    private_percent: int = Field(description="the share of the gold items kept private, in percent (0: no split)")


class BoardOut(Schema):
    task: BoardTaskOut
    phase: BoardPhaseOut
    sort: str
    calibrated: bool
    page: int = Field(description="this page of the teams (from 1)")
    pages: int = Field(description="how many pages of per_page teams there are")
    teams: int = Field(description="how many teams the board has (with or without a scored submission)")
    columns: list[ColumnOut]
    rows: list[BoardRowOut] = Field(
        description="the page's teams, in board order, then every baseline, then the teams' majority vote and oracle"
    )
    intervals: dict[str, Any] = Field(
        description='95 % paired-bootstrap intervals: "status" (current; recomputing, while the intervals of the '
        'latest scores are computed in the background, with "due_at" when the computation waits for the pause '
        'between two computations of a phase; failed, when that computation failed, with "failure" saying why; '
        "or unavailable) and, when current, the CLI's layout: "
        '"raw" and "calibrated", per raw column id, per team, {"score": [lo, hi], "rank": [best, worst]} (null: '
        'undefined), "tied_with_leader", "indistinguishable", "bootstrap" (replicates, seed, ...), "skipped" '
        "(teams without intervals, and why)"
    )


class CorrelationsOut(Schema):
    phase: str
    set: str
    columns: list[ColumnOut]
    teams: int = Field(description="teams on the board")
    rho: list[list[float | None]] = Field(description="Spearman's rho between the columns' rankings; null: undefined")
    n_teams: list[list[int]] = Field(description="the teams each rho rests on (defined under both columns)")
    intervals_status: str = Field(
        description="current, recomputing, failed or unavailable (as the leaderboard's intervals)"
    )
    spearman_intervals: list[list[list[float] | None]] | None = Field(
        description="the layout of rho, a 95 % paired-bootstrap [lo, hi] per cell (null: undefined); null unless "
        "the intervals are current"
    )


class SubmissionCreatedOut(Schema):
    id: int
    phase: str = Field(description="the phase the upload went to: the one open at the time")
    status: str
    url: str = Field(description="poll this for the status and scores")
    page: str = Field(description="the submission's page")


class MetricOut(Schema):
    column: str
    calibrated_column: str
    name: str
    raw: Number
    calibrated: Number
    rank: int | None
    calibrated_rank: int | None


class SubmissionOut(Schema):
    id: int
    task: str
    phase: str
    part: str = Field(
        description="what the scores are computed on: all items, or the public or private part of a split test set"
    )
    team: str
    status: str
    failure: str | None
    kind: str
    file_name: str
    description: str | None = Field(description="the team's own note on the run: for its team and the organisers")
    created_at: dt.datetime
    scored_at: dt.datetime | None
    feedback: str = Field(description="what the task's feedback policy lets you see: all, full, primary, validated")
    primary_metric: str
    primary: str | None = Field(description="the primary score as shown on the page (rounded under 'primary')")
    metrics: list[MetricOut] | None = Field(
        None,
        description="every metric raw and calibrated (all, full); under 'full' while results are hidden, rounded to "
        "the page's 4 decimals",
    )
    confusion_matrix: list[list[float]] | None = Field(
        None, description="rows predicted, columns gold; only when results are public, or to organisers"
    )
    calibrated_matrix: list[list[float] | list[float | None]] | None = None
    page: str


class AnalysisOut(Schema):
    phase: str
    status: str = Field(
        description="current; recomputing (what follows is of earlier scores while the latest are analysed); "
        "failed (the analysis of the latest scores failed: what follows is of earlier ones, 'failure' says why); or "
        "none (not computed yet, or fewer than two teams)"
    )
    failure: str | None = Field(None, description="why the analysis of the latest scores failed (status failed)")
    computed_at: str | None
    teams: int = Field(description="the teams whose counting runs were analysed")
    skipped: dict[str, str] = Field(description="teams left out, and why")
    majority_vote: dict[str, Any] | None = Field(
        None,
        description="the teams' majority vote (each item labelled as most teams labelled it, a tie to the first "
        'label) scored like a run: "ties" (items tied), "confusion_matrix", "metrics", "calibrated", "per_class", '
        '"calibrated_per_class", and "would_rank" (the rank it would take among the teams, per raw column id, '
        '"raw" and "calibrated"); absent with fewer than two teams. A task with several labels an item: the vote '
        'of each output, "ties" the item-output cells tied and "ties_per_output" {output: n}, "metrics" and '
        '"calibrated" the means over the outputs (and the metrics read from the items), "outputs" each output\'s '
        '{"confusion_matrix", "metrics", ...}',
    )
    oracle: dict[str, Any] | None = Field(
        None,
        description='an item right when any team got it right: "accuracy", "macro_recall", then as majority_vote. '
        "A task with several labels an item: an item's output right when any team got it right, and "
        '"exact_match_one_run", the share of the items one team got entirely right',
    )
    unsolved: dict[str, int] | dict[str, dict[str, int]] | None = Field(
        None,
        description="per gold label: the items no team got right; a task with several labels an item: per output, "
        "per gold label, the items no team got right on that output",
    )
    agreement: dict[str, Any] | None = Field(
        None,
        description='Cohen\'s kappa between the teams (the first 50 under the primary metric): "teams" in the order '
        'of their clustering, "kappa" in that order (null: undefined; of several labels an item, the mean over the '
        "outputs of each output's kappa), \"clustering\" (method, order, merges with the groups' mean kappa)",
    )
    hardest: list[dict[str, Any]] | None = Field(
        None,
        description="every item no team got right and at least 20 in all: id, gold, right (teams that got it "
        "right), votes (teams per label); a task with several labels an item: gold per output, right the teams "
        "that got every output right, votes per output and label; only for those who may see gold labels: the "
        "organisers, and everyone once they published them after every phase using the same gold file closed",
    )


class WhatIfOut(Schema):
    phase: str
    output: str | None = Field(
        None,
        description="a task with several labels an item: the output this what-if is of (its labels are the classes, "
        "its own metrics the columns); null for a task of one label column",
    )
    target: dict[str, float] = Field(description="the target's share of each class, normalised to sum to 1")
    page: int = Field(description="this page of the teams (from 1), in the order of the primary metric at the target")
    pages: int = Field(description="how many pages of per_page teams there are")
    teams: int = Field(description="how many teams have a scored submission on the board")
    columns: dict[str, dict[str, dict[str, float | int | None]]] = Field(
        description="per raw column id, per team of the page: its value and rank at the target, and its rank today"
    )
    moved: dict[str, list[dict[str, str | int | None]]] = Field(
        description="per column id, the teams of the page whose rank differs at the target: team, from, to"
    )
    per_class: dict[str, dict[str, dict[str, float | None]]] = Field(
        description="per team of the page, per class: the per-class measures at the target, its share and its "
        "predicted rate"
    )
