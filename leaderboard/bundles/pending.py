"""A pending import as its preview reads it: the organiser's answers so far, and the plan of
what confirming would create (:func:`leaderboard.bundles.reading.plan_of`: nothing is written)."""

from __future__ import annotations

from leaderboard.bundles.plan import FilePlan, ImportOptions, TaskPlan
from leaderboard.bundles.reading import open_bundle, plan_of
from leaderboard.models import StoredFile, Task, TaskImport


def pending_import(*, user, pk: int) -> TaskImport | None:
    """The person's own pending import ``pk``, if it still waits."""
    if not user.is_authenticated:
        return None
    return TaskImport.objects.select_related("file").defer("file__content").filter(pk=pk, user=user).first()


def import_options(pending: TaskImport) -> ImportOptions:
    """The answers kept with a pending import, with the gold files given."""
    golds = {
        gold.phase_index: FilePlan(
            name=gold.file.name, content=bytes(gold.file.content), source=f"given: {gold.file.name}"
        )
        for gold in pending.golds.select_related("file")
    }
    return ImportOptions.of_json(pending.options or {}, golds=golds)


def import_plan(*, pending: TaskImport, options: ImportOptions) -> TaskPlan:
    content = bytes(StoredFile.objects.values_list("content", flat=True).get(pk=pending.file_id))
    return plan_of(open_bundle(content, name=pending.file.name), options)


def free_slug(slug: str) -> str:
    """``slug``, or ``slug-2``, ``slug-3``… whichever no task has yet (the preview's suggestion)."""
    base = (slug or "imported-task")[:54]
    candidate, number = base, 1
    while Task.objects.filter(slug=candidate).exists():
        number += 1
        candidate = f"{base}-{number}"
    return candidate
