"""Tracks: the phases of a CodaLab or Codabench competition that ran side by side there (one per
language and subtask of a SemEval task, opening the same day), read as subtasks here, each
holding its track's phases one after another, its dates kept.

The rules, in the order they apply:

- Two phases run *side by side* when they are open at the same moment: they open together, or
  one opens before the other closes (CodaLab's phases close when a later one opens, so there
  only phases that open together do). A *wave* is a set of phases chained by running side by
  side; no two phases of one wave can follow one another, so each is in a track of its own.
- No wave holds two phases: there are no tracks, and the competition is one task.
- Otherwise there are as many tracks as the largest wave has phases; the first such wave names
  them (the words of each phase's name that the others of the wave do not share:
  ``Practice-English-A`` → ``English A``).
- A phase of another wave goes to the track it resembles most (:func:`_evidence`): the words of
  its name and files' names that tell it from the rest of its wave, and the scoring program or
  reference data of the track's phase in the naming wave, where no other track shares them. The
  phases of one wave go to different tracks. A phase is *recognised* when its name holds every
  word of the track's, or it shares the track's scoring program or reference data, and no other
  pairing of the phase or of the track scores as high; otherwise it is a guess, and so is every
  phase of a wave whose phases do not open at the same moment.
- A phase that ran alone (a trial phase before the tracks open) goes to the track that it is
  tied to as above, if any; otherwise it is in no track, and goes to every subtask where its gold
  file fits every track (or it has none yet), else to the first track it fits, else to the first
  (:func:`settle`).
- The organiser may move any phase to another track, or to every one; a track left without a
  phase is no subtask, and a single track left is the task itself. Two phases that open at the
  same moment cannot be in one track (:func:`grouped`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from leaderboard import errors
from leaderboard.bundles.plan import ALONE, CHOSEN, EVERY_TRACK, GUESSED, RECOGNISED, TrackChoice
from scoring.engine.schemes import LABEL_VALUES

WORD = re.compile(r"[^\W_]+")
EVERY_SUBTASK = "every subtask"
NO_TRACKS = "it has no tracks (no two of its phases ran side by side)"
KNOWN_TRACKS = "give a track's number, 1 to {count}, or “all” for every subtask"
RAN_ALONE = "it ran alone and resembles no track"


@dataclass(frozen=True)
class Slot:
    """A phase as the recognition of tracks sees it: its number (from 0), name, dates, and the
    paths of its reference data and scoring program in the bundle."""

    index: int
    name: str
    opens_at: dt.datetime
    closes_at: dt.datetime
    reference: str = ""
    program: str = ""


def in_words(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _stem(path: str) -> str:
    name = path.strip().rstrip("/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def _words(slot: Slot) -> frozenset[str]:
    """The words of a phase's name and of its reference data's and scoring program's names."""
    text = " ".join((slot.name, _stem(slot.reference), _stem(slot.program)))
    return frozenset(word.lower() for word in WORD.findall(text))


def waves(slots: Sequence[Slot]) -> list[list[Slot]]:
    """The phases chained by running side by side, in time order (each wave in the bundle's)."""
    found: list[list[Slot]] = []
    closes = None
    for slot in sorted(slots, key=lambda slot: (slot.opens_at, slot.index)):
        if found and slot.opens_at < closes:
            found[-1].append(slot)
            closes = max(closes, slot.closes_at)
        else:
            found.append([slot])
            closes = slot.closes_at
    return [sorted(wave, key=lambda slot: slot.index) for wave in found]


def _distinct_words(wave: list[Slot], common: frozenset[str]) -> dict[int, frozenset[str]]:
    """Each phase's words less those every phase of its wave has (or ``common``, for a phase alone)."""
    shared = frozenset.intersection(*(_words(slot) for slot in wave)) if len(wave) > 1 else common
    return {slot.index: _words(slot) - shared for slot in wave}


def _track_name(slot: Slot, wave: list[Slot], number: int) -> str:
    shared = frozenset.intersection(*(frozenset(w.lower() for w in WORD.findall(s.name)) for s in wave))
    words = [word for word in WORD.findall(slot.name) if word.lower() not in shared]
    return " ".join(words) or f"Track {number}"


def _unique_names(names: list[str]) -> tuple[str, ...]:
    return tuple(name if names.count(name) == 1 else f"{name} ({number})" for number, name in enumerate(names, 1))


@dataclass(frozen=True)
class _Track:
    """A track as its phase in the naming wave shows it: the words that tell it from the others,
    and its scoring program and reference data where no other track shares them."""

    words: frozenset[str]
    program: str
    reference: str


def _own(paths: list[str], path: str) -> str:
    """``path``, if it is one phase's alone among ``paths``; else ``""`` (it tells no track)."""
    return path if path and paths.count(path) == 1 else ""


def _evidence(slot: Slot, words: frozenset[str], track: _Track) -> tuple[float, list[str]]:
    """How much a phase (``words``: those that tell it from its wave) resembles a track: a score,
    and what ties it to the track for sure."""
    shared = len(words & track.words)
    score = (shared / len(track.words) if track.words else 0) + (shared / len(words) if words else 0)
    ties = ["name"] if track.words and track.words <= words else []
    for what, mine, the_tracks in (
        ("scoring program", slot.program, track.program),
        ("reference data", slot.reference, track.reference),
    ):
        if the_tracks and mine == the_tracks:
            score += 2
            ties.append(what)
    return score, ties


def recognise(slots: Sequence[Slot]) -> tuple[tuple[str, ...], list[TrackChoice]]:
    """The tracks' names and each phase's track as recognised or guessed (a phase in none has
    the track ``""``: :func:`settle` places it); none without tracks."""
    found = waves(slots)
    count = max(len(wave) for wave in found)
    if count < 2:
        return (), []
    naming = next(wave for wave in found if len(wave) == count)
    common = frozenset.intersection(*(_words(slot) for slot in slots))
    naming_words = _distinct_words(naming, common)
    programs, references = [slot.program for slot in naming], [slot.reference for slot in naming]
    tracks = [
        _Track(naming_words[slot.index], _own(programs, slot.program), _own(references, slot.reference))
        for slot in naming
    ]
    names = _unique_names([_track_name(slot, naming, number) for number, slot in enumerate(naming, 1)])
    choices = []
    for wave in found:
        words = _distinct_words(wave, common)
        evidence = {
            (slot.index, number): _evidence(slot, words[slot.index], track)
            for slot in wave
            for number, track in enumerate(tracks)
        }
        choices += [
            _choice(slot, track, wave, evidence, count=len(tracks))
            for slot, track in _matched(wave, len(tracks), evidence).items()
        ]
    return names, sorted(choices, key=lambda choice: choice.phase_index)


def _matched(wave: list[Slot], count: int, evidence: dict) -> dict[Slot, int | None]:
    """Each phase of a wave and its track (each a different one), best matches first; a phase
    alone has one only where something ties it to it."""
    pairs = sorted(
        ((evidence[slot.index, t][0], slot.index, t, slot) for slot in wave for t in range(count)),
        key=lambda pair: (-pair[0], pair[1], pair[2]),
    )
    matched: dict[Slot, int | None] = {}
    for _, _, track, slot in pairs:
        if slot not in matched and track not in matched.values():
            matched[slot] = track
    if len(wave) == 1:
        (slot,) = wave
        if not evidence[slot.index, matched[slot]][1]:
            matched[slot] = None
    return matched


def _choice(slot: Slot, track: int | None, wave: list[Slot], evidence: dict, *, count: int) -> TrackChoice:
    """Where a phase goes, and how sure that is: recognised where something ties it to its track,
    its wave's phases open together, and no other pairing of the phase or the track scores as high."""
    base = {"phase_index": slot.index, "phase": slot.name, "opens_at": slot.opens_at}
    if track is None:
        return TrackChoice(**base, track="", how=ALONE, reason=RAN_ALONE)
    score, ties = evidence[slot.index, track]
    rivals = [evidence[slot.index, other][0] for other in range(count) if other != track]
    rivals += [evidence[other.index, track][0] for other in wave if other is not slot]
    together = len({other.opens_at for other in wave}) == 1
    if ties and together and all(rival < score for rival in rivals):
        return TrackChoice(**base, track=str(track + 1), how=RECOGNISED, reason=f"by its {in_words(ties)}")
    why = "nothing tells its track for sure" if together else "it overlapped the others without opening with them"
    return TrackChoice(**base, track=str(track + 1), how=GUESSED, reason=f"a guess: {why}")


Columns = Mapping[str, set[str]]
"""A gold file's label columns and their values (:func:`leaderboard.bundles.reference.columns_in`)."""


def fits(gold: Columns, track: Columns) -> bool:
    """Whether a gold file can be a phase's in a subtask whose other gold files hold ``track``:
    the same label column and labels, or the same outputs (each 0/1, or labels it holds)."""
    if set(gold) != set(track) or not gold:
        return False
    if len(gold) == 1:
        return gold == track
    return all(values <= track[name] or values <= set(LABEL_VALUES) for name, values in gold.items())


def settle(
    names: tuple[str, ...],
    recognised: list[TrackChoice],
    *,
    chosen: Mapping[int, str],
    columns: Callable[[int], Columns | None],
) -> tuple[TrackChoice, ...]:
    """Every phase's track: the organiser's choice, else the one recognised or guessed; a phase
    in no track by the default of the module's rules (``columns``: a phase's gold file's label
    columns, ``None`` without one). An unknown track or phase is refused, naming it."""
    known = {str(number) for number in range(1, len(names) + 1)} | {EVERY_TRACK}
    by_index = {choice.phase_index: choice for choice in recognised}
    for index, track in chosen.items():
        if index not in by_index or track not in known:
            phase = by_index[index].phase if index in by_index else "none"
            raise errors.IMPORT_TRACK_UNKNOWN.error(
                f"track-{index}",
                number=index + 1,
                phase=phase,
                track=track,
                known=KNOWN_TRACKS.format(count=len(names)),
            )
    placed = [
        replace(choice, track=chosen[choice.phase_index], how=CHOSEN, reason="your choice")
        if choice.phase_index in chosen
        else choice
        for choice in recognised
    ]
    golds = {choice.phase_index: columns(choice.phase_index) for choice in placed}  # each gold file read once
    held: dict[str, dict[str, set[str]]] = {}
    for choice in placed:
        for track in _tracks_of(choice, len(names)):
            for name, values in (golds[choice.phase_index] or {}).items():
                held.setdefault(track, {}).setdefault(name, set()).update(values)
    return tuple(
        _default(choice, names, golds[choice.phase_index], held) if not choice.track else choice for choice in placed
    )


def _tracks_of(choice: TrackChoice, count: int) -> list[str]:
    if choice.track == EVERY_TRACK:
        return [str(number) for number in range(1, count + 1)]
    return [choice.track] if choice.track else []


def _default(choice: TrackChoice, names: tuple[str, ...], gold: Columns | None, held: dict) -> TrackChoice:
    """Where a phase in no track goes unless the organiser says otherwise: to every subtask
    where its gold file fits every track (or it has none yet), else to the first track it fits,
    else to the first."""
    numbers = [str(number) for number in range(1, len(names) + 1)]
    fitting = [number for number in numbers if gold is not None and fits(gold, held.get(number, {}))]
    if gold is None or fitting == numbers:
        why = "it has no gold file yet" if gold is None else "its gold file fits every track"
        return replace(choice, track=EVERY_TRACK, reason=f"{choice.reason}; {why}")
    fit = in_words([names[int(number) - 1] for number in fitting]) or "no track"
    return replace(choice, track=(fitting or ["1"])[0], reason=f"{choice.reason}; its gold file fits {fit}")


def grouped(choices: Sequence[TrackChoice], count: int) -> list[list[TrackChoice]]:
    """The phases of each track, in time order (a track of no phase is left empty); refused where
    two phases of one track open at the same moment, naming both and the track."""
    groups: list[list[TrackChoice]] = [[] for _ in range(count)]
    for choice in choices:
        for track in _tracks_of(choice, count):
            groups[int(track) - 1].append(choice)
    for number, group in enumerate(groups, start=1):
        group.sort(key=lambda choice: (choice.opens_at, choice.phase_index))
        for earlier, later in pairwise(group):
            if earlier.opens_at == later.opens_at:
                raise errors.IMPORT_TRACK_SIDE_BY_SIDE.error(
                    f"track-{later.phase_index}",
                    phase=later.phase,
                    other=earlier.phase,
                    opens_at=later.opens_at,
                    track=number,
                )
    return groups


def describe(choice: TrackChoice, names: tuple[str, ...]) -> str:
    """Where a phase goes, in words."""
    if choice.track == EVERY_TRACK:
        return EVERY_SUBTASK
    return f"track {choice.track}, {names[int(choice.track) - 1]}"
