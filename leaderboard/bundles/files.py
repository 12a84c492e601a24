"""Reading the files a bundle's YAML names: present, unchanged (their SHA-256), and a gold file
valid as an upload's (:func:`leaderboard.uploads.parse_gold`), each refusal naming the bundle's
file, the field that named it and what is wrong."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from django.core.exceptions import ValidationError

from leaderboard import errors
from leaderboard.bundles.plan import FilePlan, PhasePlan
from leaderboard.bundles.zips import FORM_FIELD, SafeZip
from leaderboard.uploads import parse_gold, safe_file_name
from scoring.engine.gold import class_counts
from scoring.engine.schemes import Scheme


def read_named(bundle: SafeZip, *, path: str, manifest: str, where: str, sha256: str | None = None) -> bytes:
    """The bytes of the file at ``path``, which ``where`` of ``manifest`` names."""
    if not bundle.has(path):
        raise errors.BUNDLE_MISSING_FILE.error(FORM_FIELD, file=manifest, where=where, path=path)
    content = bundle.read(path)
    if sha256 is not None:
        found = hashlib.sha256(content).hexdigest()
        if found != sha256.lower():
            raise errors.BUNDLE_CHECKSUM.error(
                FORM_FIELD, file=manifest, where=where, path=path, found=found, expected=sha256
            )
    return content


def named_file(
    bundle: SafeZip, *, path: str, manifest: str, where: str, sha256: str | None = None, title: str = ""
) -> FilePlan:
    content = read_named(bundle, path=path, manifest=manifest, where=where, sha256=sha256)
    return FilePlan(name=safe_file_name(path.rsplit("/", 1)[-1]), content=content, source=path, title=title)


def refused_file(error: ValidationError, *, manifest: str, where: str, path: str) -> ValidationError:
    """An upload's refusal of a bundle's file, saying which file and which field named it."""
    return errors.BUNDLE_FILE_REFUSED.error(
        FORM_FIELD, file=manifest, where=where, path=path, details=" ".join(error.messages)
    )


def with_gold_facts(phase: PhasePlan, scheme: Scheme | list[str], *, manifest: str, where: str) -> PhasePlan:
    """The phase with its gold file checked as an upload's and its items counted per label
    (``output=label`` for a task of several outputs); ``scheme`` may be the labels alone."""
    if phase.gold is None:
        return phase
    scheme = scheme if isinstance(scheme, Scheme) else Scheme(labels=tuple(scheme))
    try:
        gold = parse_gold(content=phase.gold.content, scheme=scheme, name=phase.gold.source)
    except ValidationError as error:
        raise refused_file(error, manifest=manifest, where=where, path=phase.gold.source) from None
    return replace(phase, gold_items=gold.n_items, gold_counts=tuple(class_counts(gold).items()))
