"""Sample submissions and the format section of a task page.

Every phase offers two generated sample files, both valid by construction for its current gold
file: its ids with a label each (hard labels) and with one probability column per label
(probabilities); a phase of a task with several labels an item offers one, its ids with a label
for each output (one column per output). Nothing in them says anything about the gold: the ids come in an order drawn
from the site's secret key, not the gold file's (a gold file sorted by label would otherwise give
every label away), the hard sample draws each label from a fixed-seed random generator, and the
probability sample gives every label the same share. The format section
shows their first lines and the rules the validator applies, written from the validator's own
settings so that the page cannot drift from what an upload meets.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from django.conf import settings

from leaderboard.models import Phase
from leaderboard.results_cache import cached
from leaderboard.uploads import kept_gold
from scoring.engine.io import PROBABILITY_TOLERANCE
from scoring.engine.schemes import Scheme

SAMPLE_KINDS = ("labels", "probabilities")
"""The sample files of a phase, by the name they have in URLs and file names."""

PREVIEW_LINES = 4
"""Lines of each sample (the header included) that the format section shows."""

PROBABILITY_DIGITS = 6
SAMPLE_SEED = 0
"""The seed of the hard sample's labels: the same file on every download."""


def _csv(rows) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(rows)
    return out.getvalue().encode()


def uniform_shares(n_labels: int) -> list[str]:
    """Equal shares written with :data:`PROBABILITY_DIGITS` decimals, the last one taking the
    rounding so that the written numbers sum to exactly 1."""
    share = round(Fraction(1, n_labels), PROBABILITY_DIGITS)
    last = 1 - share * (n_labels - 1)
    return [f"{float(share):.{PROBABILITY_DIGITS}f}"] * (n_labels - 1) + [f"{float(last):.{PROBABILITY_DIGITS}f}"]


def sample_kinds(scheme: Scheme) -> tuple[str, ...]:
    """The sample files a phase of the task offers (probabilities: one label column only)."""
    return SAMPLE_KINDS[:1] if scheme.has_outputs else SAMPLE_KINDS


def sample_rows(*, ids, scheme: Scheme, kind: str):
    """The rows (header first) of a sample file for ``ids`` of a task of ``scheme``."""
    if scheme.has_outputs:
        rng = np.random.default_rng(SAMPLE_SEED)
        codes = [rng.integers(len(output.labels), size=len(ids)) for output in scheme.outputs]
        yield ["id", *(output.name for output in scheme.outputs)]
        for row, item in enumerate(ids):
            yield [item, *(output.labels[column[row]] for output, column in zip(scheme.outputs, codes, strict=True))]
        return
    labels = list(scheme.labels)
    if kind == "labels":
        yield ["id", "label"]
        codes = np.random.default_rng(SAMPLE_SEED).integers(len(labels), size=len(ids))
        for item, code in zip(ids, codes, strict=True):
            yield [item, labels[code]]
        return
    shares = uniform_shares(len(labels))
    yield ["id", *labels]
    for item in ids:
        yield [item, *shares]


def _gold_ids(phase: Phase) -> list[str]:
    """The phase's gold ids in an order drawn from the site's secret key and the phase: the same
    on every download, unrelated to the gold file's order (cached)."""

    def shuffled() -> list[str]:
        salt = hmac.new(settings.SECRET_KEY.encode(), f"sample-order:{phase.pk}".encode(), "sha256").digest()
        ids = [str(item) for item in kept_gold(phase).ids]
        return sorted(ids, key=lambda item: hashlib.blake2b(item.encode(), key=salt[:32], digest_size=8).digest())

    return cached(phase, "sample-ids", (phase.gold_version,), shuffled)


def sample_file(*, phase: Phase, kind: str) -> bytes:
    """A sample submission of ``kind`` (one of :data:`SAMPLE_KINDS`) for every id of the phase's
    gold file (in :func:`_gold_ids`' order)."""
    return _csv(sample_rows(ids=_gold_ids(phase), scheme=phase.task.scheme, kind=kind))


def sample_name(*, phase: Phase, kind: str) -> str:
    return f"{phase.task.slug}-{phase.slug}-sample-{kind}.csv"


@dataclass(frozen=True)
class FormatRules:
    """The format section: the first lines of each sample and the rules, in words."""

    labels_preview: str
    probabilities_preview: str
    rules: list[str]
    kinds: tuple[str, ...]
    """The sample files offered."""


PLACEHOLDER_IDS = [f"item-{n}" for n in range(1, PREVIEW_LINES)]
"""Ids the format section shows to a person who may not see the phase's data yet."""


def format_rules(phase: Phase | None, *, show_ids: bool = True) -> FormatRules | None:
    """What the format section shows for ``phase``'s files (``None`` without a phase): its
    first gold ids, or placeholders where ``show_ids`` is false (the data is for registered
    participants) or the phase waits for its gold file."""
    if phase is None:
        return None
    scheme = phase.task.scheme
    ids = _gold_ids(phase)[: PREVIEW_LINES - 1] if show_ids and not phase.waits_for_gold else PLACEHOLDER_IDS
    preview = {
        kind: _csv(sample_rows(ids=ids, scheme=scheme, kind=kind)).decode().rstrip("\n")
        for kind in sample_kinds(scheme)
    }
    if scheme.has_outputs:
        return _outputs_rules(scheme, preview["labels"])
    labels = list(scheme.labels)
    label_list = ", ".join(repr(label) for label in labels)
    return FormatRules(
        labels_preview=preview["labels"],
        probabilities_preview=preview["probabilities"],
        kinds=SAMPLE_KINDS,
        rules=[
            "UTF-8 text, comma-separated (CSV) or tab-separated (TSV: a tab in the header line decides); a "
            "byte-order mark and Windows line ends are accepted.",
            "Line 1 is the header: id,label for hard labels, or id and one column per label, named exactly "
            f"as the task's labels ({label_list}) in any order, for probabilities. 'id' and 'label' may be "
            "written in any case; nothing may come before the header, not even a blank line.",
            "One line per id of the phase's gold file: every id exactly once, no id that is not in the gold "
            "file. Lines may come in any order; ids are compared as exact strings ('007' is not '7').",
            f"A hard label is exactly one of {label_list} (case and spaces count).",
            "Probabilities are numbers between 0 and 1; each line's sum to 1 within "
            f"{PROBABILITY_TOLERANCE:g}, and is then divided by its sum so that every item weighs one.",
            _limits(),
        ],
    )


def _limits() -> str:
    return (
        f"At most {settings.MAX_FILE_ROWS:,} data lines and {settings.MAX_UPLOAD_BYTES / 2**20:g} MiB. A file that "
        "breaks a rule is refused with the line and what was expected, and counts against no limit."
    )


def _outputs_rules(scheme: Scheme, preview: str) -> FormatRules:
    """The format section of a task with several labels an item."""
    outputs = "; ".join(
        f"{output.name!r}: {', '.join(repr(label) for label in output.labels)}" for output in scheme.outputs
    )
    names = ", ".join(repr(output.name) for output in scheme.outputs)
    return FormatRules(
        labels_preview=preview,
        probabilities_preview="",
        kinds=sample_kinds(scheme),
        rules=[
            "UTF-8 text, comma-separated (CSV) or tab-separated (TSV: a tab in the header line decides); a "
            "byte-order mark and Windows line ends are accepted.",
            "Line 1 is the header: id and one column per output, named exactly as the task's outputs, in any order. "
            "'id' may be written in any case; nothing may come before the header, not even a blank line.",
            "One line per id of the phase's gold file: every id exactly once, no id that is not in the gold "
            "file. Lines may come in any order; ids are compared as exact strings ('007' is not '7').",
            (
                f"Each column holds 0 or 1 (1: the label is present, 0: absent); the columns: {names}."
                if scheme.multi_label
                else f"Each column holds one of its output's labels (case and spaces count): {outputs}."
            ),
            _limits(),
        ],
    )
