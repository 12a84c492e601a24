"""A phase's bootstrap intervals as the site stores them, computed in a process of their own.

The site (``leaderboard.stability``) writes what the job needs into a directory
(:func:`write_job`) and runs ``python -m scoring.engine.intervals_job DIRECTORY --memory-mb M --niceness K``:
a process with no web request, no database and at most ``M`` MiB of address space, so that a
computation that needs more fails alone (``MemoryError``, exit status 3) and takes nothing
else down. It writes the result, the bootstrap's part of the CLI's board JSON
(:func:`result_of`), to ``DIRECTORY/result.json`` as text that the site stores as it is, and
prints a summary line (JSON) on its standard output.

What the job receives: the phase's gold codes and, for a split test set, the mask of the part
shown; per counting run, its team, its stored per-item predictions (packed,
:func:`scoring.engine.items.pack_items`) and its stored confusion matrix (of a task with several
outputs: each output's, in the outputs' order), against which the items are checked before they
are used; the replicates, the seed, the task's labels, whether they are a scale, or its outputs;
its primary metric; the directory where the phase's replicates are kept
between two computations (:mod:`scoring.engine.team_rows`); the teams the site left out
already, and the reason to give a run whose items do not give its matrix.

Beside that directory the job keeps which runs it checked and named already
(``STORE.checked.json``: a digest of the packed items, the matrix, the gold codes and the part
shown, to the run's :func:`~scoring.engine.team_rows.team_key`), so that after a new run only
that run's items are unpacked and checked: the others' values are read from the store by name.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import json
import os
import resource
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from scoring.engine.aggregate import METHODS, Aggregate
from scoring.engine.bootstrap import bootstrap
from scoring.engine.intervals_json import aggregate_intervals_json, stability_json
from scoring.engine.items import compact, reproduces, unpack_items
from scoring.engine.schemes import Output, Scheme
from scoring.engine.team_rows import team_key

JOB, GOLD, KEEP, ITEMS, RESULT = "job.json", "gold.npy", "keep.npy", "items", "result.json"
OUT_OF_MEMORY = 3
"""The exit status of a job that needed more memory than it may take."""


def result_of(
    *,
    gold: np.ndarray,
    labels: Sequence[str],
    teams: Mapping[int, str],
    items: Mapping[int, np.ndarray],
    replicates: int,
    seed: int,
    ordinal: bool = False,
    primary: str = "macro_f1",
    store: Path | str | None = None,
    keys: Mapping[int, str] | None = None,
    outputs: Sequence[Output] = (),
) -> dict[str, Any]:
    """The stored result: the bootstrap's part of the CLI's board JSON (teams keyed by their id,
    as text), the names of the teams (``teams``: every counting team, with or without
    intervals), and the items' count. ``items``: each team's predictions aligned to ``gold``;
    ``ordinal``: the labels are an ordered scale (the ordinal errors are columns too). With the
    intervals of every column, those of the overall rankings of
    :func:`~scoring.engine.aggregate.column_sets` (``primary``: the task's primary metric).
    ``store``: where the replicates are kept between computations; ``keys``: each team's
    :func:`~scoring.engine.team_rows.team_key` when known already (then a team's items are
    read only if its values are computed); ``outputs``: a task with several (``gold`` and each
    team's items, items × outputs codes; ``labels`` unused)."""
    scheme = Scheme(labels=tuple(labels), ordinal=ordinal, outputs=tuple(outputs))
    heatmap = scheme.paired_columns()
    team_ids = [str(team) for team in items]
    raw = scheme.ranking_columns(calibrated=False)
    result: dict[str, Any] = {
        "teams": {str(team): name for team, name in teams.items()},
        "n_items": len(gold),
        "spearman_columns": [column.id for column in heatmap],
        # A list keeps its order in every database; a JSON object's keys do not in PostgreSQL's jsonb.
        "columns": [column.id for column in raw],
    }
    if not items:
        return result
    sets = scheme.column_sets(primary=primary)
    overall_rankings = {
        (method, name): Aggregate(method, tuple(columns)) for method in METHODS for name, columns in sets.items()
    }
    stability = bootstrap(
        gold,
        _InOrder(items),
        labels=labels,
        outputs=outputs,
        replicates=replicates,
        seed=seed,
        columns=scheme.ranking_columns(calibrated=None),
        heatmap=heatmap,
        aggregates=list(overall_rankings.values()),
        store=store,
        keys=None if keys is None else [keys[team] for team in items],
    )
    overall: dict[str, dict] = {}
    with _collector_paused():
        for (method, name), aggregate in overall_rankings.items():
            overall.setdefault(method, {})[name] = aggregate_intervals_json(stability, aggregate, team_ids)
        return {**result, **stability_json(stability, team_ids, raw), "aggregate_intervals": overall}


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while the result is built: millions of dicts and lists,
    none in a cycle, which it would otherwise scan again and again (a third of the time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _InOrder(Sequence):
    """A mapping's values in the order of its keys, each read when asked for."""

    def __init__(self, mapping: Mapping) -> None:
        self.mapping, self.keys = mapping, list(mapping)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, index: int) -> Any:
        return self.mapping[self.keys[index]]


class _Runs(Mapping):
    """Each team's predictions (the part shown, ``keep``): an array, or packed items checked
    before, unpacked when read."""

    def __init__(self, keep: np.ndarray | None) -> None:
        self.keep, self.runs = keep, {}

    def __getitem__(self, team: int) -> np.ndarray:
        run = self.runs[team]
        if isinstance(run, bytes):
            run = unpack_items(run)
            return run if self.keep is None else run[self.keep]
        return run

    def __iter__(self) -> Iterator[int]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)


def _checked_file(store: str | None) -> Path | None:
    return None if store is None else Path(f"{store}.checked.json")


def _read_checked(path: Path | None) -> dict[str, str]:
    try:
        found = json.loads(path.read_text()) if path is not None else {}
    except (OSError, ValueError):  # none yet, or unreadable: every run is checked again
        return {}
    return {digest: key for digest, key in found.items() if isinstance(key, str)} if isinstance(found, dict) else {}


def _reproduces(gold: np.ndarray, found: np.ndarray, matrix: list, *, outputs: bool) -> bool:
    """Whether a run's items give its stored matrix (of a task with several outputs: each
    output's column, its output's matrix)."""
    if not outputs:
        return reproduces(gold, found, matrix)
    if found.ndim != 2 or found.shape != gold.shape or len(matrix) != gold.shape[1]:
        return False
    return all(reproduces(gold[:, k], found[:, k], matrix[k]) for k in range(gold.shape[1]))


def write_job(
    directory: Path,
    *,
    gold: np.ndarray,
    keep: np.ndarray | None,
    runs: Sequence[tuple[int, bytes, list]],
    teams: Mapping[int, str],
    settings: Mapping[str, Any],
) -> None:
    """The job's inputs in ``directory``: ``runs`` one (team id, packed items, stored matrix) per
    counting run to use; ``teams`` every counting team's name, in the result's order;
    ``settings`` the rest (labels, ordinal, primary, replicates, seed, store, skipped, mismatch:
    see the module docstring)."""
    np.save(directory / GOLD, np.asarray(gold), allow_pickle=False)
    if keep is not None:
        np.save(directory / KEEP, np.asarray(keep, dtype=bool), allow_pickle=False)
    with open(directory / ITEMS, "wb") as items:
        for _, packed, _ in runs:
            items.write(packed)
    job = {
        **settings,
        "teams": [[team, name] for team, name in teams.items()],
        "runs": [[team, len(packed), matrix] for team, packed, matrix in runs],
    }
    (directory / JOB).write_text(json.dumps(job))


def run_job(directory: Path) -> dict[str, Any]:
    """Compute the result of the job in ``directory`` and write it; a summary for the logs."""
    job = json.loads((directory / JOB).read_text())
    gold = np.load(directory / GOLD, allow_pickle=False)
    keep = np.load(directory / KEEP, allow_pickle=False) if (directory / KEEP).exists() else None
    skipped = dict(job["skipped"])
    outputs = [Output.of(output) for output in job.get("outputs", ())]
    n_classes = max([len(output.labels) for output in outputs] or [len(job["labels"])])
    context = hashlib.blake2b(json.dumps([job["labels"], job.get("outputs")]).encode(), digest_size=20)
    for array in (gold, keep):
        context.update(b"-" if array is None else np.ascontiguousarray(array, dtype=np.int64).tobytes())
    checked_file = _checked_file(job["store"])
    checked, now_checked = _read_checked(checked_file), {}
    items, keys = _Runs(keep), {}
    with open(directory / ITEMS, "rb") as packed:
        for team, length, matrix in job["runs"]:
            data = packed.read(length)
            digest = context.copy()
            digest.update(json.dumps(matrix).encode() + b"\n" + data)
            digest = digest.hexdigest()
            if digest in checked:
                items.runs[team], keys[team] = data, checked[digest]
            else:
                found = unpack_items(data)
                if not _reproduces(gold, found, matrix, outputs=bool(outputs)):
                    skipped[str(team)] = job["mismatch"]
                    continue
                items.runs[team] = found if keep is None else found[keep]
                keys[team] = team_key(compact(items.runs[team], n_classes))
            now_checked[digest] = keys[team]
    result = result_of(
        gold=gold if keep is None else gold[keep],
        labels=job["labels"],
        teams={team: name for team, name in job["teams"]},
        items=items,
        keys=keys,
        replicates=job["replicates"],
        seed=job["seed"],
        ordinal=job["ordinal"],
        primary=job["primary"],
        store=job["store"],
        outputs=outputs,
    )
    if checked_file is not None and now_checked != checked:  # this job's runs only, replaced whole
        scratch = checked_file.with_name(f"{checked_file.name}.{os.getpid()}")
        scratch.write_text(json.dumps(now_checked))
        os.replace(scratch, checked_file)
    result["skipped"] = dict(sorted(skipped.items(), key=lambda item: int(item[0])))  # in the teams' order
    (directory / RESULT).write_bytes(orjson.dumps(result, option=orjson.OPT_SERIALIZE_NUMPY))  # tens of MB
    return {"teams": len(items), "skipped": len(skipped)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--memory-mb", type=int, help="the most address space the job may take")
    parser.add_argument("--niceness", type=int, default=0, help="how much to lower the job's CPU priority")
    args = parser.parse_args(argv)
    if args.niceness:
        os.nice(args.niceness)
    if args.memory_mb:
        limit = args.memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        summary = run_job(args.directory)
    except MemoryError:
        print(f"the computation needed more than {args.memory_mb:,} MiB of memory", file=sys.stderr)
        return OUT_OF_MEMORY
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
