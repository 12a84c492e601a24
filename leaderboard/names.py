"""Names people choose (teams, user names): one canonical form, nothing hidden in them.

A name is NFKC-normalised (so the full-width ``ｖ`` and the mathematical ``𝐯`` are the letter
``v``, as Django's log-in form already treats user names) and its runs of white space become
one space. Characters a reader cannot see or that reorder the text around them (format
characters, Unicode category Cf: zero-width spaces and joiners, bidirectional controls such
as U+202E) and other control characters are refused, so that no two names that look the same
are different names. Uniqueness compares the case-folded canonical form, and, for team names,
the confusable skeleton too (:func:`lookalike_key`): ``Тeam A`` with a Cyrillic Т, or ``lris``
against ``Iris``, is another team's name.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from confusable_homoglyphs.confusables import confusables_data

from leaderboard import errors

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn"})
"""Control, format (invisible and bidirectional controls), private-use, surrogate, unassigned."""


def hidden_characters(name: str) -> list[str]:
    """The code points of ``name`` that a reader cannot see, as ``U+202E`` strings."""
    return [f"U+{ord(ch):04X}" for ch in name if unicodedata.category(ch) in HIDDEN_CATEGORIES]


def canonical_name(name: str, *, field: str | None = None) -> str:
    """The NFKC form of ``name`` with single spaces; refuses hidden characters (keyed by
    ``field`` for a service, plain for a form field's own clean method when it is ``None``)."""
    hidden = hidden_characters(name)
    if hidden:
        characters = ", ".join(dict.fromkeys(hidden))
        problem = errors.HIDDEN_CHARACTERS
        raise problem.error(field, characters=characters) if field else problem.plain(characters=characters)
    return " ".join(unicodedata.normalize("NFKC", name).split())


def name_key(name: str) -> str:
    """What two names must differ in to be different names: the case-folded canonical form."""
    return unicodedata.normalize("NFKC", " ".join(unicodedata.normalize("NFKC", name).split()).casefold())


@cache
def _prototypes() -> dict[str, str]:
    """Each character that Unicode's confusables table maps to one prototype (``а`` Cyrillic →
    ``a``, ``0`` → ``O``, ``1`` → ``l``, ``m`` → ``rn``), from the confusable-homoglyphs data."""
    return {
        character: homoglyphs[0]["c"]
        for character, homoglyphs in confusables_data.items()
        if len(character) == 1 and len(homoglyphs) == 1
    }


def skeleton(text: str) -> str:
    """The confusable skeleton of ``text`` (Unicode TS #39, section 4): every character replaced
    by its prototype, until none is left to replace."""
    prototypes = _prototypes()
    out = []
    for character in text:
        seen = set()
        while character in prototypes and character not in seen:
            seen.add(character)
            character = prototypes[character]
        out.append(character)
    return "".join(out)


def lookalike_key(name: str) -> str:
    """What two names must differ in not to look alike: the skeleton of the canonical form,
    case-folded, and its skeleton again (``Iris`` and ``lris``, ``Теam`` and ``Team``)."""
    canonical = " ".join(unicodedata.normalize("NFKC", name).split())
    return skeleton(skeleton(canonical).casefold())
