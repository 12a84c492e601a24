"""How ranks shift: every team re-ranked at another class distribution (the what-if), and the
public part of a split test set against the final ranking (the shake-up).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from leaderboard import errors
from leaderboard.formatting import rank_cells
from leaderboard.models import ALL_ITEMS, PUBLIC_PART, Phase, Task
from leaderboard.pages.results import api_page, board_data_of, items_page
from leaderboard.results_cache import cached
from leaderboard.selectors.boards import BoardData, columns_of, output_matrices, primary_column, sorted_by
from leaderboard.uploads import kept_gold
from scoring.engine import columns as board_columns
from scoring.engine import ranking
from scoring.engine.columns import Column
from scoring.engine.metrics import Value
from scoring.engine.ranking import HIGHER, Direction
from scoring.engine.registry import item_metrics
from scoring.engine.schemes import Output
from scoring.engine.split import part_masks
from scoring.engine.whatif import UNIFORM, TargetError, WhatIf, parse_target, refuse_classes_without_gold, what_if


def places_climbed(before: int | None, after: int | None) -> int | None:
    """How many places a team climbed from rank ``before`` to rank ``after`` (negative: it
    dropped); ``None`` where either rank is undefined."""
    return None if before is None or after is None else before - after


class RankMove(NamedTuple):
    """A team's rank and value under one column in two rankings (today and at a target
    prevalence; on the public part and in the final ranking), and how far it moved."""

    team: str
    rank_before: int | None
    value_before: Value
    rank_after: int | None
    value_after: Value

    @property
    def shift(self) -> int | None:
        return places_climbed(self.rank_before, self.rank_after)


def rank_moves(
    teams: Sequence[str], before: Sequence[Value], after: Sequence[Value], direction: Direction = HIGHER
) -> list[RankMove]:
    """Each team's competition rank and value under ``before`` and ``after``, in the order of
    the ranking ``after`` (undefined last, ties by name)."""
    values = np.column_stack([ranking.as_array(before), ranking.as_array(after)])
    ranks = ranking.competition_rank_matrix(values, [direction, direction])
    ranked_after = np.where(ranks[:, 1] > 0, ranks[:, 1], len(teams) + 1)  # undefined last; equal values tie
    order = np.lexsort((ranking.name_places(teams), ranked_after)).tolist()
    ranks_before, ranks_after = ranks[:, 0].tolist(), ranks[:, 1].tolist()
    return [
        RankMove(teams[row], ranks_before[row] or None, before[row], ranks_after[row] or None, after[row])
        for row in order
    ]


class UnknownOutput(ValueError):
    """A what-if asked of an output the task does not have (:data:`errors.NO_SUCH_OUTPUT`)."""

    def __init__(self, task: Task, name: str) -> None:
        self.params = {"output": name, "outputs": ", ".join(output.name for output in task.scheme.outputs)}
        super().__init__(errors.NO_SUCH_OUTPUT.format(**self.params))


def chosen_output(task: Task, name: str | None) -> Output | None:
    """The output a what-if of ``task`` is of: the one named ``name``, by default the first;
    ``None`` for a task of one label column (``name`` is then not read). A task of several
    outputs has a what-if per output, each the single-label what-if of that output's labels and
    matrices. Raises :class:`UnknownOutput`."""
    outputs = task.scheme.outputs
    if not outputs:
        return None
    if not name:
        return outputs[0]
    found = next((output for output in outputs if output.name == name), None)
    if found is None:
        raise UnknownOutput(task, name)
    return found


def labels_of(task: Task, output: Output | None) -> tuple[str, ...]:
    """The classes a what-if re-weights: the task's labels, or ``output``'s."""
    return tuple(task.labels) if output is None else output.labels


def output_key(output: Output | None) -> tuple[str, ...]:
    """What names ``output`` in a what-if's cache keys (nothing for a task of one label column)."""
    return () if output is None else (output.name,)


def gold_counts(phase: Phase, output: Output | None = None) -> list[int]:
    """Items per class (of the task's labels, or of ``output``'s) in the part of the phase's
    gold file its board shows now (every item, or one part of a split test set), cached."""

    def count() -> list[int]:
        part = phase.shown_part()
        gold = kept_gold(phase)
        codes = gold.codes  # items, or items × outputs
        if part != ALL_ITEMS:
            codes = codes[part_masks(len(codes), percent=phase.private_percent, seed=phase.split_seed_number)[part]]
        if output is not None:
            codes = codes[:, [o.name for o in gold.outputs].index(output.name)]
        return [int(n) for n in np.bincount(codes, minlength=len(labels_of(phase.task, output)))]

    return cached(phase, "gold-counts", output_key(output), count)


def what_if_classes(phase: Phase, output: Output | None = None) -> tuple[list[str], list[int]]:
    """The classes a what-if re-weights (the task's labels, or ``output``'s) and the gold items
    of each in the part the board shows (:func:`gold_counts`). Raises
    :class:`~scoring.engine.whatif.TargetError` (``CLASS_WITHOUT_GOLD``) when a class has none:
    no target can give it a share."""
    labels, counts = list(labels_of(phase.task, output)), gold_counts(phase, output)
    refuse_classes_without_gold(labels, counts)
    return labels, counts


def what_if_board(*, phase: Phase, target: tuple[Fraction, ...], output: Output | None = None) -> WhatIf:
    """Every team's counting submission in the phase (its matrix of ``output``, if given)
    re-scored at ``target`` (cached). Today's values of a single-label task are the board's."""
    task = phase.task

    def build() -> WhatIf:
        labels = labels_of(task, output)
        data = board_data_of(phase)
        if output is not None:
            matrices = cached(phase, "what-if-matrices", output_key(output), lambda: output_matrices(data, output.name))
            return what_if(matrices, labels=labels, target=target)
        rows = np.flatnonzero(data.scored & np.isfinite(data.matrices).all(axis=(1, 2)))  # a part not scored: none
        columns = [data.index[column.id] for column in columns_of(task)]
        return what_if(
            dict(zip([data.names[row] for row in rows], data.matrices[rows], strict=True)),
            labels=labels,
            target=target,
            ordinal=task.ordinal,
            today=data.values[np.ix_(rows, columns)],
        )

    return cached(phase, "what-if", (*output_key(output), *(str(share) for share in target)), build)


def what_if_order(*, phase: Phase, board: WhatIf, column: Column, output: Output | None = None) -> list[RankMove]:
    """Every team of a what-if (of ``output``, if given) under ``column``, in the order of its
    ranking at the target, with its rank and value today and there (cached)."""
    return cached(
        phase,
        "what-if-moves",
        (*output_key(output), *(str(share) for share in board.target), column.id),
        lambda: rank_moves(board.teams, board.values_today(column), board.values(column), column.direction),
    )


def what_if_api(
    *, phase: Phase, target: tuple[Fraction, ...], page: int, per_page: int, output: Output | None = None
) -> dict[str, Any]:
    """The API's what-if (of ``output``, if given): a page of the teams (``per_page`` 0: all), in
    the order of the primary metric at the target (of the first column, when the primary metric
    is none of the output's), as :meth:`WhatIf.as_json` writes them (cached a page at a time)."""
    board = what_if_board(phase=phase, target=target, output=output)
    column = sorted_by(phase.task, board.columns(), None)
    order = [row.team for row in what_if_order(phase=phase, board=board, column=column, output=output)]
    shown, page, pages = api_page(order, page=page, per_page=per_page)
    key = (*output_key(output), *(str(share) for share in target), page, per_page)
    return {
        **cached(phase, "api-what-if", key, lambda: board.as_json(teams=shown)),
        "output": output and output.name,
        "page": page,
        "pages": pages,
        "teams": len(order),
    }


def what_if_page(
    *,
    phase: Phase,
    target_text: str | None,
    column_id: str | None,
    page: str | None = None,
    query: str | None = None,
    output_name: str | None = None,
) -> dict[str, Any]:
    """The prevalence what-if of a phase (paper 000, Eq. 5 and 26-27): the target (default
    uniform, i.e. calibration), every team re-ranked under the chosen metric next to today's (a
    page of them), and the rank of those teams under every metric at the target, the movers
    marked. A target that cannot be used comes back as ``problem``, with the uniform target
    shown instead. A task with several labels an item has a what-if per output (``output_name``,
    default the first; an unknown one is ``output_problem``, the first shown instead), under that
    output's own metrics. A class without gold items in the part shown leaves no target to
    re-weight (``unavailable``)."""
    task = phase.task
    output_problem = None
    try:
        output = chosen_output(task, output_name)
    except UnknownOutput as error:
        output_problem, output = str(error), chosen_output(task, None)
    chooser = {
        "task": task,
        "phase": phase,
        "outputs": [o.name for o in task.scheme.outputs],
        "output": output and output.name,
        "across_outputs": item_metrics(labels=task.scheme.multi_label) if output else (),
        "output_problem": output_problem,
    }
    try:
        labels, counts = what_if_classes(phase, output)
    except TargetError as error:
        return chooser | {"unavailable": str(error)}
    problem = None
    try:
        target = parse_target(target_text or UNIFORM, labels=labels, gold_counts=counts)
    except TargetError as error:
        problem = str(error)
        target = parse_target(UNIFORM, labels=labels, gold_counts=counts)
    board = what_if_board(phase=phase, target=target, output=output)
    columns = board.columns()
    column = sorted_by(task, columns, column_id)
    every_row = what_if_order(phase=phase, board=board, column=column, output=output)
    rows, paging = items_page(every_row, [row.team for row in every_row], page=page, query=query)
    total = sum(counts)
    index = {team: i for i, team in enumerate(board.teams)}
    team_rows = [index[row.team] for row in rows]
    today, at_target = board.rank_matrix_today[team_rows], board.rank_matrix[team_rows]
    return chooser | {
        "labels": labels,
        "shares": [
            (label, float(share), count / total if total else 0.0)
            for label, share, count in zip(labels, target, counts, strict=True)
        ],
        "is_uniform": len(set(target)) == 1,
        "problem": problem,
        "column": column,
        "columns": columns,
        "rows": rows,
        "paging": paging,
        "movers": board.moves(column),
        "every_metric": [
            (row.team, rank_cells(before, after)) for row, before, after in zip(rows, today, at_target, strict=True)
        ],
        "columns_with_movers": board.columns_with_moves(),
    }


def shakeup_page(
    *, phase: Phase, column_id: str | None, page: str | None = None, query: str | None = None
) -> dict[str, Any]:
    """How ranks moved between the public part of a split test set (what the board showed while
    the phase ran) and the final ranking (the private part, or every item): under one column,
    each team's two ranks (a page of them); under every column, Spearman's rho between the two
    rankings."""
    task = phase.task
    columns = columns_of(task, calibrated=None)
    column = board_columns.column_by_id(columns, column_id or "") or primary_column(task)

    def boards() -> tuple[BoardData, BoardData]:
        return board_data_of(phase, PUBLIC_PART), board_data_of(phase, phase.final_part)

    def moves() -> list[RankMove]:
        public, final = boards()
        return rank_moves(
            list(public.names), public.column_values(column), final.column_values(column), column.direction
        )

    def correlations() -> list[tuple[Column, ranking.Correlation]]:
        public, final = boards()
        return [
            (c, ranking.spearman(public.column_array(c), final.column_array(c), directions=(c.direction,) * 2))
            for c in columns
        ]

    every_row = cached(phase, "shake-up-moves", (column.id,), moves)
    rows, paging = items_page(every_row, [row.team for row in every_row], page=page, query=query)
    return {
        "task": task,
        "phase": phase,
        "column": column,
        "columns": columns,
        "final_part": phase.get_final_part_display(),
        "rows": rows,
        "paging": paging,
        "movers": [row for row in every_row if row.shift],
        "correlations": cached(phase, "shake-up", (), correlations),
    }
