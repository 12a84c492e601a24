"""How sure is a rank: a phase's paired-bootstrap intervals, computed in the background.

For every team and every ranking column (raw and calibrated): the 95 % percentile interval of
the score and the [best, worst] rank; per pair of heatmap columns, the interval of Spearman's
rho; the teams tied with the leader and the groups that cannot be told apart. The engine does
the work (:func:`scoring.engine.bootstrap.bootstrap`, its rules in that module's docstring);
here is when it runs, on what, and where the result is kept.

**On what.** Each team's counting submission (as the board counts it), through the per-item
predictions stored with its scores (:attr:`Submission.items`), against the phase's gold codes:
``settings.BOOTSTRAP_REPLICATES`` replicates (1,000) from ``settings.BOOTSTRAP_SEED``, both
stored with the result, so ``python -m scoring gold.csv <the counting files> --bootstrap 1000
--seed 1`` gives the same intervals. A submission scored before items were kept has its stored
file read once more here (not re-scored: its scores stay as they are) and its items kept. A
submission is left out, with the reason shown beside its team, when it is being re-scored
against a new gold file (its items belong to the old one), when its file cannot be read
against the gold any more, or when its items do not give its stored confusion matrix exactly.

**When.** As every derived result of a phase (:mod:`leaderboard.derived`): asked for by the
write that changes its counting scores, computed off the request path, at most once every
``settings.BOOTSTRAP_EVERY_S`` per phase (during a rush the scores change every second, and a
3,000-team phase's intervals take a core for seconds), meanwhile shown stale with when the next
are due. The computation itself runs in a child process with a memory and a time limit
(:mod:`leaderboard.stability_job`), never in a web process nor a worker's; it keeps the phase's
replicates between two computations, so a new or re-scored run is the only one whose values it
computes. A computation that fails (memory, time) leaves the previous result in place, shown as
stale with the reason (status ``failed``).

**Where.** One :class:`PhaseStability` row per phase, stamped with the digest of what it was
computed from (:func:`inputs_digest`: each team's counting submission and its scores' version,
the gold file's version, the part of the test set, the replicates and the seed). A page built
from other inputs shows the stored intervals marked as stale, never as current. Storing a
result raises the task's results version (:func:`leaderboard.results_cache.results_changed`),
so pages show it at once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from leaderboard import stability_job
from leaderboard.models import ALL_ITEMS, ComputationFailed, DerivedResult, Phase, PhaseStability, Submission, Team
from leaderboard.selectors.boards import BoardData, board_data, counting_submissions, scores_digest
from leaderboard.uploads import kept_gold
from scoring.engine.columns import Column
from scoring.engine.io import InputFileError, LabelFile, read_predictions
from scoring.engine.items import pack_items, reproduces
from scoring.engine.scorer import aligned_items
from scoring.engine.significance import LEVEL
from scoring.engine.split import part_masks

RESULT_KEPT_S = 60 * 60
"""How long a result's arrays stay in the cache after they were last made."""

CURRENT, RECOMPUTING, UNAVAILABLE, FAILED = "current", "recomputing", "unavailable", "failed"
"""The states of a phase's intervals, as pages and the API name them: ``failed`` when the
computation for the current scores failed (the reason is given; the next change of the scores
asks again)."""

SKIPPED_RESCORING = "being re-scored against the new gold file"
SKIPPED_UNREADABLE = "its file no longer reads against the gold file"
SKIPPED_MISMATCH = "its per-item predictions do not give its stored confusion matrix"
SKIPPED_NO_ITEMS = "no per-item predictions stored"


# --- computing ---------------------------------------------------------------------------------


def _packed_items(submission: Submission, *, gold: LabelFile) -> bytes | None:
    """A counting submission's per-item predictions, packed as stored, or ``None`` when its
    file no longer reads against the gold. Items missing (scored before they were kept) are
    read from the stored file, and kept on the row when they give its matrix."""
    if submission.items is not None:
        return bytes(submission.items)
    content = bytes(submission.file.content) if submission.file_id else b""
    try:
        items = aligned_items(read_predictions(content, gold=gold, name=submission.file.name))
    except InputFileError:
        return None
    packed = pack_items(items, len(gold.labels))
    if reproduces(gold.codes, items, submission.confusion_matrix):
        # Only onto the scores these items were checked against: a re-score since wins.
        Submission.objects.filter(
            pk=submission.pk,
            scored_gold_version=submission.scored_gold_version,
            score_count=submission.score_count,
        ).update(items=packed)
    return packed


def inputs_digest(phase: Phase, data: BoardData | None = None) -> str:
    """A digest of everything the phase's intervals are computed from: each team's counting
    submission (as the board counts it) and the version of its scores, the gold file's version,
    the part of the test set shown now and its split (:func:`scores_digest` of its board,
    ``data`` if already read), the replicates and the seed, the task's primary metric and
    whether its labels are a scale."""
    data = data or board_data(phase)
    task = phase.task
    inputs = (
        scores_digest(data, phase),
        settings.BOOTSTRAP_REPLICATES,
        settings.BOOTSTRAP_SEED,
        task.primary_metric,  # the overall ranking of the primary metric alone
        task.ordinal,
    )
    return hashlib.sha256(repr(inputs).encode()).hexdigest()


def computed(phase: Phase, data: BoardData) -> tuple[dict[str, Any], str]:
    """The phase's intervals of the runs its board counts (``data``), computed in a process of
    their own (:mod:`leaderboard.stability_job`): the row's fields and a summary for the logs.
    Raises :class:`~leaderboard.models.ComputationFailed` when the child process fails (its
    memory, its time)."""
    replicates, seed = settings.BOOTSTRAP_REPLICATES, settings.BOOTSTRAP_SEED
    outputs = phase.task.scheme.outputs
    fields = ("confusion_matrix", "output_scores", "items", "kind", "file", "score_count")
    counting = sorted(counting_submissions(phase, fields=fields, part=data.part).items())
    gold = kept_gold(phase)
    runs: list[tuple[int, bytes, list]] = []
    skipped: dict[str, str] = {}
    for team_id, submission in counting:
        packed = None
        if submission.scored_gold_version != phase.gold_version:
            skipped[str(team_id)] = SKIPPED_RESCORING
        elif outputs and submission.items is None:  # kept from the first scoring of such a task
            skipped[str(team_id)] = SKIPPED_NO_ITEMS
        elif outputs:
            matrices = [submission.output_scores[output.name]["confusion_matrix"] for output in outputs]
            runs.append((team_id, bytes(submission.items), matrices))
        elif (packed := _packed_items(submission, gold=gold)) is None:
            skipped[str(team_id)] = SKIPPED_UNREADABLE
        else:
            runs.append((team_id, packed, submission.confusion_matrix))
    names = dict(Team.objects.filter(pk__in=[team for team, _ in counting]).values_list("pk", "name"))
    del counting  # the runs' items are in ``runs``, packed
    keep = None
    if data.part != ALL_ITEMS:
        keep = part_masks(len(gold.codes), percent=phase.private_percent, seed=phase.split_seed_number)[data.part]
    job = {
        "labels": list(phase.task.labels or ()),
        "outputs": [output.as_json() for output in outputs],
        "ordinal": phase.task.ordinal,
        "primary": phase.task.primary_metric,
        "replicates": replicates,
        "seed": seed,
        "store": str(stability_job.store_dir(phase.pk)),
        "skipped": skipped,
        "mismatch": SKIPPED_MISMATCH,
    }
    outcome = stability_job.run(gold=gold.codes, keep=keep, runs=runs, teams=names, job=job)
    if outcome.failure:
        raise ComputationFailed(outcome.failure)
    fields = {"result": stability_job.json_text(outcome.result), "replicates": replicates, "seed": seed}
    return fields, f"{outcome.teams} teams, {outcome.skipped} left out, {replicates} replicates"


# --- reading -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class IntervalsNote:
    """What a page says about a phase's intervals, without the intervals themselves (small, so
    that every cached piece of a page can carry it): see ``_intervals_note.html``."""

    status: str
    shown: bool = False
    stale: bool = False
    computed_at: dt.datetime | None = None
    due_at: dt.datetime | None = None
    summary: str = ""
    every: str = ""
    skipped: dict[str, str] = field(default_factory=dict)
    result: bool = False
    """Whether a result is stored at all."""
    failure: str = ""
    """Why the computation for the current scores failed (status ``failed``)."""


SECTIONS = ("raw", "calibrated")


@dataclass(frozen=True)
class IntervalsData:
    """A stored result as arrays: what pages read of it, a team and a column at a time, without
    loading the whole result (at 3,000 teams, megabytes of JSON) for each page. Made once per
    computation (:func:`_data_of`, cached by the time it was computed: a result never changes)."""

    teams: dict[int, str]
    """Team id → its name when the intervals were computed, in the result's order."""
    team_index: dict[int, int]
    columns: tuple[str, ...]
    """The raw column ids, in the board's order; a calibrated column is its raw id's
    ``calibrated`` section."""
    ranks: np.ndarray
    """(section, column, team, bound): best and worst rank, -1 where undefined."""
    scores: np.ndarray
    """(section, column, team, bound): the score interval, NaN where undefined."""
    tied: dict[tuple[str, str], list[int]]
    groups: dict[tuple[str, str], list[list[int]]]
    spearman_columns: tuple[str, ...]
    spearman_intervals: list
    skipped: dict[int, str]
    bootstrap: dict[str, Any]
    n_items: int
    behind: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0, 3)))
    """(section, column, team, [difference lo, hi, Holm's p]): each team against the column's
    leader (:mod:`scoring.engine.significance`), NaN for the leader and where undefined."""
    overall: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    """(method, set) → (team, [value lo, hi, rank best, worst]) of the overall rankings
    (:func:`scoring.engine.aggregate.column_sets`), NaN where undefined."""

    @classmethod
    def of(cls, result: dict[str, Any]) -> IntervalsData:
        teams = {int(team): name for team, name in result["teams"].items()}
        order = [int(team) for team in result["teams"]]
        columns = tuple(result.get("columns", ()))
        shape = (len(SECTIONS), len(columns), len(order), 2)
        ranks, scores = np.full(shape, -1, dtype=np.int32), np.full(shape, np.nan)
        index = {team: t for t, team in enumerate(order)}
        behind = np.full((*shape[:3], 3), np.nan)
        for s_index, section in enumerate(SECTIONS):
            for c_index, column in enumerate(columns):
                for team, cell in result["intervals"][section].get(column, {}).items():
                    t = index[int(team)]
                    if cell["rank"] is not None:
                        ranks[s_index, c_index, t] = cell["rank"]
                    if cell["score"] is not None:
                        scores[s_index, c_index, t] = cell["score"]
                for team, cell in result.get("behind_leader", {}).get(section, {}).get(column, {}).items():
                    if cell["difference"] is not None and cell["p_holm"] is not None:
                        behind[s_index, c_index, index[int(team)]] = [*cell["difference"], cell["p_holm"]]
        overall = {}
        for method, sets in result.get("aggregate_intervals", {}).items():
            for name, cells in sets.items():
                found = np.full((len(order), 4), np.nan)
                for team, cell in cells.items():
                    if cell["value"] is not None:
                        found[index[int(team)]] = [*cell["value"], *cell["rank"]]
                overall[method, name] = found
        return cls(
            teams=teams,
            team_index=index,
            columns=columns,
            ranks=ranks,
            scores=scores,
            tied={
                (section, column): [int(t) for t in found]
                for section in SECTIONS
                for column, found in result["tied_with_leader"][section].items()
            },
            groups={
                (section, column): [[int(t) for t in group] for group in groups]
                for section in SECTIONS
                for column, groups in result["indistinguishable"][section].items()
            },
            spearman_columns=tuple(result["spearman_columns"]),
            spearman_intervals=result["spearman_intervals"],
            skipped={int(team): reason for team, reason in result.get("skipped", {}).items()},
            bootstrap=dict(result["bootstrap"]),
            n_items=result["n_items"],
            behind=behind,
            overall=overall,
        )


@dataclass(frozen=True)
class Intervals:
    """A phase's intervals as the pages and the API show them: the state (``current``,
    ``recomputing``, ``failed`` or ``unavailable``) and the stored result, current or, while the
    intervals are recomputed or when their computation failed, the previous one (``stale``)."""

    status: str
    failure: str = ""
    """Why the computation for the current scores failed (status ``failed``)."""
    data: IntervalsData | None = None
    stale: bool = False
    computed_at: dt.datetime | None = None
    replicates: int = 0
    seed: int = 0
    due_at: dt.datetime | None = None
    """While recomputing: when the computation will be asked for, if it waits for
    ``settings.BOOTSTRAP_EVERY_S`` to pass since the last one; ``None`` once asked for."""
    stored: bool = False
    """Whether a result is stored at all (even one without intervals: no team could be used)."""

    @property
    def shown(self) -> bool:
        """Whether there are intervals to show (current, or stale while recomputing)."""
        return self.data is not None

    def note(self) -> IntervalsNote:
        return IntervalsNote(
            status=self.status,
            shown=self.shown,
            stale=self.stale,
            computed_at=self.computed_at,
            due_at=self.due_at,
            summary=self.summary,
            every=self.every,
            skipped=self.skipped(),
            result=self.stored,
            failure=self.failure,
        )

    @property
    def n_items(self) -> int:
        return self.data.n_items if self.data else 0

    @property
    def summary(self) -> str:
        """How the intervals were computed, for a page: "1,000 replicates (seed 1) over 12,284 items"."""
        return f"{self.replicates:,} replicates (seed {self.seed}) over {self.n_items:,} test items"

    @property
    def every(self) -> str:
        """The pause between two computations of a phase, for a page: "2 minutes", "45 seconds"."""
        seconds = round(settings.BOOTSTRAP_EVERY_S)
        if seconds % 60 == 0:
            return f"{seconds // 60} minute{'s' if seconds != 60 else ''}"
        return f"{seconds} second{'s' if seconds != 1 else ''}"

    def _team_id(self, team: int | str) -> int | None:
        if isinstance(team, int):
            return team
        return next((found for found, name in self.data.teams.items() if name == team), None)

    def _where(self, column: Column) -> tuple[int, int, str] | None:
        """The column's section index, column index and raw id in the result, if it has it."""
        section, raw = ("calibrated", column.counterpart().id) if column.calibrated else ("raw", column.id)
        if raw not in self.data.columns:
            return None
        return SECTIONS.index(section), self.data.columns.index(raw), raw

    def interval(self, column: Column, team: int | str) -> dict | None:
        """``{"score": [lo, hi] | None, "rank": [best, worst] | None}`` of a team (its id or
        name) under ``column``; ``None`` when the team has none."""
        if not self.shown:
            return None
        where, team_id = self._where(column), self._team_id(team)
        if where is None or team_id not in self.data.team_index:
            return None
        s, c, _ = where
        t = self.data.team_index[team_id]
        rank, score = self.data.ranks[s, c, t], self.data.scores[s, c, t]
        return {
            "score": None if np.isnan(score[0]) else [float(score[0]), float(score[1])],
            "rank": None if rank[0] < 0 else [int(rank[0]), int(rank[1])],
        }

    def _positions(self, team_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each team's position in the stored result (-1 for none), and which have one."""
        positions = np.array([self.data.team_index.get(int(team), -1) for team in team_ids], dtype=np.int64)
        return positions, positions >= 0

    def bounds(self, column: Column, team_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rank and score intervals of the teams ``team_ids`` under ``column`` at once:
        (rank bounds, -1 for none; score bounds, NaN for none), one row per team."""
        ranks = np.full((len(team_ids), 2), -1, dtype=np.int32)
        scores = np.full((len(team_ids), 2), np.nan)
        where = self._where(column) if self.shown else None
        if where is None:
            return ranks, scores
        s, c, _ = where
        positions, known = self._positions(team_ids)
        ranks[known] = self.data.ranks[s, c, positions[known]]
        scores[known] = self.data.scores[s, c, positions[known]]
        return ranks, scores

    def rank(self, column: Column, team: int | str) -> list[int] | None:
        found = self.interval(column, team)
        return found and found["rank"]

    def behind(self, column: Column, team_ids: np.ndarray) -> np.ndarray:
        """The teams ``team_ids`` against the leader under ``column``, one row per team: the
        interval of (leader − team), oriented so that positive is the leader better, and Holm's
        p; NaN for the leader, and where undefined."""
        found = np.full((len(team_ids), 3), np.nan)
        where = self._where(column) if self.shown and self.data.behind.size else None
        if where is None:
            return found
        positions, known = self._positions(team_ids)
        found[known] = self.data.behind[where[0], where[1], positions[known]]
        return found

    def not_significantly_behind(self, column: Column) -> list[str]:
        """Names of the teams that are not significantly behind the leader under ``column``:
        Holm's p above :data:`~scoring.engine.significance.LEVEL`."""
        if not self.shown or (where := self._where(column)) is None or self.data.behind.size == 0:
            return []
        p = self.data.behind[where[0], where[1], :, 2]
        order = list(self.data.teams)
        return [self.data.teams[order[t]] for t in np.flatnonzero(p > LEVEL)]

    def overall_bounds(self, method: str, column_set: str, team_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`bounds`, for the overall ranking ``method`` over the named set: (rank
        bounds, -1 for none; value bounds, NaN for none), one row per team."""
        ranks = np.full((len(team_ids), 2), -1, dtype=np.int32)
        values = np.full((len(team_ids), 2), np.nan)
        found = self.data.overall.get((method, column_set)) if self.shown else None
        if found is None:
            return ranks, values
        positions, known = self._positions(team_ids)
        known[known] = ~np.isnan(found[positions[known], 0])
        values[known] = found[positions[known], :2]
        ranks[known] = found[positions[known], 2:]
        return ranks, values

    def score(self, column: Column, team: int | str) -> list[float] | None:
        found = self.interval(column, team)
        return found and found["score"]

    def tied_with_leader(self, column: Column) -> list[str]:
        """Names of the teams whose rank interval includes 1 under ``column``."""
        if not self.shown or (where := self._where(column)) is None:
            return []
        section = SECTIONS[where[0]]
        return [self.data.teams[team] for team in self.data.tied.get((section, where[2]), [])]

    def groups(self, column: Column) -> list[list[str]]:
        """Names of the teams that cannot be told apart under ``column``, group by group."""
        if not self.shown or (where := self._where(column)) is None:
            return []
        section = SECTIONS[where[0]]
        return [[self.data.teams[t] for t in group] for group in self.data.groups.get((section, where[2]), [])]

    def skipped(self) -> dict[str, str]:
        """Team name → why it has no intervals."""
        if self.data is None:
            return {}
        return {self.data.teams[team]: reason for team, reason in self.data.skipped.items() if team in self.data.teams}

    def rho(self, first: Column, second: Column) -> list[float] | None:
        """The interval of rho between two heatmap columns."""
        if not self.shown:
            return None
        ids = self.data.spearman_columns
        if first.id not in ids or second.id not in ids:
            return None
        return self.data.spearman_intervals[ids.index(first.id)][ids.index(second.id)]

    def as_api(self, teams: set[str] | None = None) -> dict[str, Any]:
        """The API's ``intervals`` object: the status, and when current the CLI's layout keyed
        by team names (``raw``, ``calibrated``: of ``teams`` only, if given), the teams tied with
        the leader, the groups, each team against the leader (``behind_leader``: the interval of
        the leader's lead and Holm's p), the overall rankings' intervals (``aggregate_intervals``:
        per method, per named set of columns), the bootstrap's settings and the teams left out."""
        found: dict[str, Any] = {"status": self.status}
        if self.due_at is not None:
            found["due_at"] = self.due_at.isoformat()
        if self.failure:
            found["failure"] = self.failure
        if self.status != CURRENT or not self.shown:
            return found
        data, names = self.data, self.data.teams
        order = [team for team in data.teams if teams is None or names[team] in teams]

        def section(s: int) -> dict:
            return {
                column: {
                    names[team]: {
                        "score": None
                        if np.isnan(data.scores[s, c, t, 0])
                        else [float(data.scores[s, c, t, 0]), float(data.scores[s, c, t, 1])],
                        "rank": None
                        if data.ranks[s, c, t, 0] < 0
                        else [int(data.ranks[s, c, t, 0]), int(data.ranks[s, c, t, 1])],
                    }
                    for team in order
                    for t in (data.team_index[team],)
                }
                for c, column in enumerate(data.columns)
            }

        return {
            **found,
            **{name: section(s) for s, name in enumerate(SECTIONS)},
            "tied_with_leader": {
                name: {
                    c: [names[t] for t in data.tied.get((name, c), [])] for c in data.columns if (name, c) in data.tied
                }
                for name in SECTIONS
            },
            "indistinguishable": {
                name: {
                    c: [[names[t] for t in group] for group in data.groups[(name, c)]]
                    for c in data.columns
                    if (name, c) in data.groups
                }
                for name in SECTIONS
            },
            "behind_leader": {
                name: {
                    column: {
                        names[team]: {"difference": [float(lo), float(hi)], "p_holm": float(p)}
                        for team in order
                        for lo, hi, p in (data.behind[s, c, data.team_index[team]],)
                        if not np.isnan(p)
                    }
                    for c, column in enumerate(data.columns)
                }
                for s, name in enumerate(SECTIONS)
                if data.behind.size
            },
            "aggregate_intervals": {
                method: {
                    column_set: {
                        names[team]: {
                            "value": [float(found[t, 0]), float(found[t, 1])],
                            "rank": [int(found[t, 2]), int(found[t, 3])],
                        }
                        for team in order
                        for t in (data.team_index[team],)
                        if not np.isnan(found[t, 0])
                    }
                    for (chosen, column_set), found in data.overall.items()
                    if chosen == method
                }
                for method in dict.fromkeys(method for method, _ in data.overall)
            },
            "bootstrap": {**data.bootstrap, "n_items": data.n_items},
            "skipped": self.skipped(),
        }


def _data_of(phase: Phase, row: PhaseStability) -> IntervalsData | None:
    """The arrays of the result computed at ``row.computed_at`` (cached by that time: a
    result never changes; read from the database and turned into arrays once). ``None`` when
    the result holds no intervals."""
    key = f"stability:data:v1:{phase.pk}:{row.computed_at.isoformat()}"

    def read() -> IntervalsData | bool:
        result = PhaseStability.objects.filter(pk=row.pk).values_list("result", flat=True).first()
        return IntervalsData.of(result) if result and "intervals" in result else False

    found = cache.get(key)
    if found is None:
        found = read()
        cache.set(key, found, RESULT_KEPT_S)
    return found or None


def read_ahead(phase: Phase) -> None:
    """Turn the phase's stored result into arrays, into the cache (:func:`_data_of`), once it
    is computed: at 3,000 teams that takes seconds, which the first reader of a board after new
    intervals used to wait for."""
    row = PhaseStability.objects.filter(phase=phase, computed_at__isnull=False).only("computed_at").first()
    if row is not None:
        _data_of(phase, row)


def intervals_of(*, phase: Phase, data: BoardData | None = None) -> Intervals:
    """The phase's intervals as its pages show them now: the stored result, current when it was
    computed from the phase's current inputs (``data``: its board, if already read), else
    marked as stale (being recomputed, or due at a given time). Reads only; call it only for
    someone who may see the board."""
    if settings.BOOTSTRAP_REPLICATES < 1:
        return Intervals(status=UNAVAILABLE)
    row = PhaseStability.objects.filter(phase=phase).only(*DerivedResult.STATE, "replicates", "seed").first()
    if row is None:
        return Intervals(status=RECOMPUTING)
    state = row.state(inputs_digest(phase, data), pause_s=settings.BOOTSTRAP_EVERY_S, now=timezone.now())
    stored = row.computed_at is not None
    found = _data_of(phase, row) if stored else None
    if state.current:
        status = CURRENT if found is not None else UNAVAILABLE
    else:
        status = FAILED if state.failure else RECOMPUTING
    if not stored:
        return Intervals(status=status, due_at=state.due_at, failure=state.failure)
    return Intervals(
        status=status,
        failure=state.failure,
        data=found,
        stale=not state.current,
        computed_at=row.computed_at,
        replicates=row.replicates,
        seed=row.seed,
        due_at=state.due_at,
        stored=True,
    )
