"""The bootstrap's replicates on disk, team after team: what keeps its memory that of a block
of teams or of replicates whatever the number of teams, and what a phase keeps between two
computations (:mod:`scoring.engine.bootstrap`).

A :class:`TeamRows` file holds, per slot (a team), ``rows × width`` numbers of one dtype, row
after row: one replicate per row. It is written a block of teams at a time and read either a
block of teams (whole slots, one read each) or a block of rows of every team (one read per
team), with plain reads and writes rather than a memory map, so that the pages the kernel
caches are never counted as the process's memory.

A :class:`ReplicateStore` is a directory holding what a set of replicates needs again: its
resampling weights (fixed by the seed), and each team's values in every replicate, in a slot
of a :class:`TeamRows` file, found by a digest of the team's predictions. A new or re-scored
run is then the only team whose values are computed; the others are read. The directory is
stamped with a digest of everything the values depend on (the gold codes, the columns, the
replicates, the seed, the rules' version): under any other stamp it starts empty. Slots are
reused once their team is gone, so the file holds at most as many teams as the phase had at
once, plus the newcomers of one computation. A computation holds the directory's lock
throughout; the index of slots is replaced atomically, and a slot is written only while no
index names it, so an interrupted computation leaves a store that is right, if incomplete.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

STORE_VERSION = 1
"""Raised when what a store holds, or how, changes: an older store then starts empty."""


class TeamRows:
    """``rows × width`` numbers of ``dtype`` per slot, in the file at ``path`` (created if
    missing). Reads of slots never written give zeros."""

    def __init__(self, path: Path, *, rows: int, width: int, dtype: np.dtype | type) -> None:
        self.path = Path(path)
        self.rows, self.width = rows, width
        self.dtype = np.dtype(dtype)
        self.row_bytes = width * self.dtype.itemsize
        self.slot_bytes = rows * self.row_bytes
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)

    def close(self) -> None:
        os.close(self.fd)

    def write(self, slot: int, values: np.ndarray, *, first_row: int = 0) -> None:
        """``values`` (rows × width) into ``slot`` from row ``first_row`` on."""
        data = np.ascontiguousarray(values, dtype=self.dtype)
        offset = slot * self.slot_bytes + first_row * self.row_bytes
        view = memoryview(data).cast("B")
        while view:
            written = os.pwrite(self.fd, view, offset)
            view, offset = view[written:], offset + written

    def read(self, slots: Sequence[int], start: int = 0, stop: int | None = None) -> np.ndarray:
        """Rows ``start:stop`` of each of ``slots``: shape (slots, rows, width)."""
        stop = self.rows if stop is None else stop
        out = np.empty((len(slots), stop - start, self.width), dtype=self.dtype)
        for index, slot in enumerate(slots):
            view = memoryview(out[index]).cast("B")
            offset = slot * self.slot_bytes + start * self.row_bytes
            while view:
                count = os.preadv(self.fd, [view], offset)
                if count == 0:  # past the end: never written, zeros
                    view[:] = bytes(len(view))
                    break
                view, offset = view[count:], offset + count
        return out


def team_key(predicted: np.ndarray) -> str:
    """A digest of one team's predictions (class codes or probability rows, as
    :func:`scoring.engine.items.compact` keeps them): the name of its values in a store."""
    array = np.ascontiguousarray(predicted)
    digest = hashlib.blake2b(f"{array.dtype.str}{array.shape}".encode(), digest_size=20)
    digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


class ReplicateStore:
    """What a set of replicates keeps (see the module docstring), in ``directory``, or in a
    temporary directory removed on :meth:`close` when ``directory`` is ``None``.

    ``stamp`` names what the values depend on; ``rows`` and ``width`` are each team's shape of
    values (the full test set then every replicate, × columns). Besides the values, the store
    keeps the teams of the last computation that wrote its ties (their slots, in order) and those
    ties (where each team stood in each replicate and column, :class:`scoring.engine.rank_order.Ties`),
    from which the next computation updates its ranks instead of sorting again."""

    def __init__(self, directory: Path | str | None, *, stamp: str, rows: int, width: int) -> None:
        self._temporary = tempfile.TemporaryDirectory(prefix="bootstrap-") if directory is None else None
        self.directory = Path(self._temporary.name if self._temporary else directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)  # one computation at a time per store
        stamp = f"{STORE_VERSION}:{stamp}:{rows}:{width}"
        if self._read_json("stamp.json") != {"stamp": stamp}:
            for path in self.directory.iterdir():
                if path.name != "lock":
                    path.unlink()
            self._write_json("stamp.json", {"stamp": stamp})
        self.rows, self.width = rows, width
        self.slots: dict[str, int] = self._read_json("slots.json") or {}
        self.last: dict = self._read_json("run.json") or {"slots": [], "ties": ""}
        for path in self.directory.glob("ties-*"):  # left by a computation that did not finish
            if path.name not in (self.last["ties"], f"{self.last['ties']}.npz"):
                path.unlink()
        self.values = TeamRows(self.directory / "values", rows=rows, width=width, dtype=np.float64)
        self.scores = TeamRows(self.directory / "scores", rows=1, width=2 * width, dtype=np.float64)
        """Each team's score intervals (columns × [lo, hi]), written with its values."""

    @classmethod
    @contextlib.contextmanager
    def open(cls, directory: Path | str | None, *, stamp: str, rows: int, width: int) -> Iterator[ReplicateStore]:
        store = cls(directory, stamp=stamp, rows=rows, width=width)
        try:
            yield store
        finally:
            store.close()

    def close(self) -> None:
        for file in (self.values, self.scores):
            file.close()
        os.close(self._lock)  # releases the lock
        if self._temporary is not None:
            self._temporary.cleanup()

    def _read_json(self, name: str) -> dict | None:
        try:
            return json.loads((self.directory / name).read_text())
        except (FileNotFoundError, ValueError):
            return None

    def _write_json(self, name: str, content: dict) -> None:
        partial = self.directory / f"{name}.partial"
        partial.write_text(json.dumps(content))
        os.replace(partial, self.directory / name)

    def weights(self, draw) -> np.ndarray:
        """The stored resampling weights, or ``draw()``'s, stored."""
        path = self.directory / "weights.npy"
        with contextlib.suppress(FileNotFoundError, ValueError, OSError):
            return np.load(path, allow_pickle=False)
        weights = draw()
        partial = self.directory / "weights.partial.npy"
        np.save(partial, weights, allow_pickle=False)
        os.replace(partial, path)
        return weights

    def assign(self, keys: Sequence[str]) -> tuple[list[int], dict[str, int]]:
        """A slot for each of ``keys`` (one per team, equal keys share one), and the slots still
        to be written, by key. Slots of keys neither among ``keys`` nor of the last
        computation's teams are given up first (the index no longer names them), then reused;
        call :meth:`commit` once the new slots are written."""
        last, wanted = set(self.last["slots"]), set(keys)
        kept = {key: slot for key, slot in self.slots.items() if key in wanted or slot in last}
        self._write_json("slots.json", kept)
        used = set(kept.values())
        free = (slot for slot in range(len(kept) + len(keys) + 1) if slot not in used)
        new = {key: next(free) for key in dict.fromkeys(keys) if key not in kept}
        self.slots = {**kept, **new}
        return [self.slots[key] for key in keys], new

    def commit(self) -> None:
        """Name every assigned slot in the index: their values are written."""
        self._write_json("slots.json", self.slots)

    @property
    def persistent(self) -> bool:
        """Whether the store outlives this computation."""
        return self._temporary is None

    @staticmethod
    def ties_dtype(teams: int) -> type:
        return np.int16 if teams < 2**15 else np.int32

    def ties(self, *, columns: int, teams: int, last: bool) -> tuple[TeamRows, dict[str, np.ndarray]] | None:
        """The last computation's ties (``last``; ``None`` when none are kept) or the file for
        this computation's: per team (in the computation's order), each replicate a row of
        ``columns`` counts of better teams then ``columns`` counts of tied ones; with them, the
        arrays :meth:`finish` kept. The caller closes the file."""
        if last and not self.last["ties"]:
            return None
        number = self.last["number"] if last else self.last.get("number", 0) + 1
        dtype = self.ties_dtype(teams)
        file = TeamRows(self.directory / f"ties-{number}", rows=self.rows - 1, width=2 * columns, dtype=dtype)
        if not last:
            return file, {}
        with np.load(self.directory / f"ties-{number}.npz", allow_pickle=False) as kept:
            return file, dict(kept)

    def finish(self, slots: Sequence[int], **arrays: np.ndarray) -> None:
        """This computation's teams (their ``slots``), the ties it wrote and ``arrays`` (for
        the next computation) are now the last ones; the slots of teams no longer there are free
        for the next computation."""
        number = self.last.get("number", 0) + 1
        np.savez(self.directory / f"ties-{number}.npz", **arrays)
        previous = self.last["ties"]
        self.last = {"slots": list(slots), "ties": f"ties-{number}", "number": number}
        self._write_json("run.json", self.last)
        if previous:
            for name in (previous, f"{previous}.npz"):
                (self.directory / name).unlink(missing_ok=True)
        current = set(slots)
        self.slots = {key: slot for key, slot in self.slots.items() if slot in current}
        self._write_json("slots.json", self.slots)
