"""Which bundle this is, and its plan: a task exported from this site (``task.yaml``) or a
CodaLab or Codabench competition (``competition.yaml``), at the top of the zip or in its one
top folder (what "compress this folder" makes)."""

from __future__ import annotations

from dataclasses import replace

from leaderboard import errors
from leaderboard.bundles import codalab, documents, task_bundle
from leaderboard.bundles.export import MANIFEST
from leaderboard.bundles.plan import ImportOptions, TaskPlan
from leaderboard.bundles.zips import FORM_FIELD, SafeZip

MANIFESTS = (MANIFEST, codalab.MANIFEST)


def open_bundle(content: bytes, *, name: str) -> SafeZip:
    """The bundle, checked (:mod:`leaderboard.bundles.zips`), rooted where its manifest is."""
    bundle = SafeZip(content, name=name)
    if not any(bundle.has(manifest) for manifest in MANIFESTS):
        top = bundle.top_folder()
        if top and any(bundle.has(f"{top}/{manifest}") for manifest in MANIFESTS):
            bundle.root = top
    if not any(bundle.has(manifest) for manifest in MANIFESTS):
        raise errors.BUNDLE_NO_MANIFEST.error(FORM_FIELD, file=name)
    return bundle


def plan_of(bundle: SafeZip, options: ImportOptions) -> TaskPlan:
    """What importing ``bundle`` with ``options`` creates (nothing is written)."""
    manifest = MANIFEST if bundle.has(MANIFEST) else codalab.MANIFEST
    document = documents.Field(manifest, "", documents.load(bundle.read(manifest), file=manifest))
    if manifest == MANIFEST:
        plan = task_bundle.read_task_bundle(bundle, document, options)
        if options.primary_metric and not plan.divided:  # a divided task's subtasks keep theirs
            plan = replace(plan, primary_metric=options.primary_metric)
    else:
        plan = codalab.read_competition(bundle, document, options)
    return plan.shifted(options.first_opens)
