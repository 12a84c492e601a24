"""A gold file's ids proved distinct, and a prediction file's ids put in the gold file's order.

Ids are exact strings. Ids that come in the gold file's order are matched by comparing the two
arrays; others go through :func:`fast_rows`, the fast id path (:mod:`scoring.engine.ids`,
:mod:`scoring.engine.id_codes`, :mod:`scoring.engine.arrays`), and Arrow's exact hash kernels
take whatever it cannot settle. :func:`check_unique` proves a gold file's ids distinct with the
same codes and keys, which it keeps for the matches to come.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from scoring.engine import arrays
from scoring.engine.files.messages import DUPLICATE_ID, FIRST_DATA_LINE, MISSING_IDS, UNKNOWN_ID, InputFileError
from scoring.engine.files.rows import first_index
from scoring.engine.id_codes import CodeIndex, IdCoder, coded
from scoring.engine.ids import all_distinct, first_codes, gold_rows, increasing, key_order


class GoldIds(Protocol):
    """What matching needs of a gold file (:class:`scoring.engine.io.LabelFile`)."""

    id_array: pa.ChunkedArray
    id_coder: IdCoder | None
    code_index: CodeIndex | None

    @property
    def n_items(self) -> int: ...

    @property
    def id_order(self) -> np.ndarray: ...


@dataclass(frozen=True)
class _Distinct:
    """What showed that a gold file's ids are distinct, kept to match prediction files."""

    sorted_keys: np.ndarray | None = None
    id_coder: IdCoder | None = None
    code_index: CodeIndex | None = None


def check_unique(ids: pa.ChunkedArray, *, name: str) -> _Distinct:
    """An error on the first id seen before. Ids with an exact integer code (plain numbers, ids
    of one width) are told by their codes; other ids that come in order are distinct without a
    sort; the rest by their sorted keys (:func:`scoring.engine.ids.key_order`). Only a repeat
    takes Arrow's exact hash."""
    coding = coded(ids)
    index = None if coding is None else CodeIndex.of(coding[1])
    if index is not None and index.distinct:
        return _Distinct(id_coder=coding[0], code_index=index)
    if index is None:
        if increasing(ids):
            return _Distinct()
        order = key_order(ids)
        if all_distinct(ids, order):
            return _Distinct(sorted_keys=order)
    repeat = _first_repeat(first_codes(ids))
    _duplicate_id(ids, row=repeat[0], first=repeat[1], name=name)


def _duplicate_id(ids: pa.ChunkedArray, *, row: int, first: int, name: str) -> None:
    raise InputFileError(
        DUPLICATE_ID, file=name, line=row + FIRST_DATA_LINE, id=ids[row].as_py(), first_line=first + FIRST_DATA_LINE
    )


def _first_repeat(keys: np.ndarray) -> tuple[int, int] | None:
    """The first row whose key an earlier row has, and that earlier row (``None``: no repeat).

    For keys that are integers from 0: a count, and a sort only when something repeats.
    """
    if not len(keys) or np.bincount(keys).max() < 2:
        return None
    order = np.argsort(keys, kind="stable")  # stable: each key's rows stay in file order
    ordered = keys[order]
    repeats = np.flatnonzero(ordered[1:] == ordered[:-1]) + 1
    place = repeats[np.argmin(order[repeats])]
    return int(order[place]), int(order[np.searchsorted(ordered, ordered[place])])


def gold_positions(ids: pa.ChunkedArray, *, gold: GoldIds, name: str) -> np.ndarray | None:
    """Where each id is in the gold file (-1: not there), after an error on the first id that
    repeats an earlier one; ``None`` when the ids are the gold ids in the gold order (the usual
    case, found by comparing the two arrays).

    Ids in another order are matched by their codes when the gold's ids have them
    (:class:`scoring.engine.id_codes.CodeIndex`), else by sorting keys
    (:func:`scoring.engine.ids.gold_rows`); when they are not the gold ids, Arrow's exact hash
    finds where each is, and a repeated id shows as a repeated gold position or, among the ids
    that are not in the gold file, as a repeated code of those alone.
    """
    if ids.equals(gold.id_array):
        return None
    rows = fast_rows(ids, gold=gold)
    if rows is not None:
        return rows
    found = pc.index_in(ids, value_set=gold.id_array.chunk(0))
    positions = arrays.values(pc.fill_null(found, -1)).astype(np.intp)
    unknown = positions < 0
    keys = positions
    if unknown.any():
        keys = positions.copy()
        keys[unknown] = gold.n_items + first_codes(ids.filter(pa.array(unknown)))
    repeat = _first_repeat(keys)
    if repeat is not None:
        _duplicate_id(ids, row=repeat[0], first=repeat[1], name=name)
    return positions


def check_coverage(positions: np.ndarray | None, ids: pa.ChunkedArray, *, gold: GoldIds, name: str) -> None:
    """Errors on the first unknown id and on gold ids with no prediction (``positions`` from
    :func:`gold_positions`; ``None``, the gold ids in order, covers them all)."""
    if positions is None:
        return
    unknown = positions < 0
    if unknown.any():
        row = first_index(unknown)
        raise InputFileError(UNKNOWN_ID, file=name, line=row + FIRST_DATA_LINE, id=ids[row].as_py())
    covered = np.zeros(gold.n_items, dtype=bool)
    covered[positions] = True
    if not covered.all():
        gold_row = first_index(~covered)
        raise InputFileError(
            MISSING_IDS,
            file=name,
            count=int((~covered).sum()),
            id=gold.id_array[gold_row].as_py(),
            gold_line=gold_row + FIRST_DATA_LINE,
        )


def in_gold_order(values: np.ndarray, positions: np.ndarray | None) -> np.ndarray:
    """Rows put where the gold file has their ids (``positions``, checked to cover every gold
    id once): one scatter, no inverse permutation to build first."""
    if positions is None:
        return values
    placed = np.empty_like(values)
    placed[positions] = values
    return placed


def fast_rows(ids: pa.ChunkedArray, *, gold: GoldIds) -> np.ndarray | None:
    """Each id's row in the gold file when ``ids`` are the gold ids in another order, found with
    no hash; ``None`` otherwise (some id unknown, repeated or missing), for Arrow's exact kernels
    to say which.

    Why a path of its own: shuffled prediction files are common (a team's run sorted its own
    way), and on them Arrow's exact hash (``index_in``) costs several times the reading of the
    files (the README's scorer benchmark, "Exact integer codes for ids"). Ids with an exact
    integer code (plain numbers, ids of one width: :mod:`scoring.engine.id_codes`) are looked
    up by code, in a table where the codes are dense; other ids by sorted 64-bit keys of their
    bytes, whose pairings are confirmed on the bytes (:func:`scoring.engine.ids.gold_rows`).
    """
    if gold.code_index is not None:
        codes = gold.id_coder.encode(ids)
        return None if codes is None else gold.code_index.rows_of(codes)
    return gold_rows(ids, gold_ids=gold.id_array, gold_order=gold.id_order)
