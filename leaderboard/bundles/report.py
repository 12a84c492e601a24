"""A plan in words: what an import creates and what could not come over, as the command
prints it (the preview page shows the same from the same plan)."""

from __future__ import annotations

from leaderboard.bundles.plan import TaskPlan
from leaderboard.models import Counting, Registration, Visibility


def report_lines(plan: TaskPlan, *, slug: str) -> list[str]:
    lines = [
        f"From {plan.source}:",
        f"  task {plan.title!r} at /tasks/{slug}/",
        f"  labels: {', '.join(plan.labels) or '(none found)'}; primary metric: {plan.primary_metric}",
        f"  registration: {Registration(plan.registration).label}; terms: "
        + (f"{len(plan.terms):,} characters" if plan.terms else "none"),
        f"  {len(plan.phases)} phase(s):",
    ]
    for phase in plan.phases:
        lines.append(
            f"    {phase.name} ({phase.slug}): {phase.opens_at:%Y-%m-%d %H:%M} – {phase.closes_at:%Y-%m-%d %H:%M} UTC, "
            f"{phase.max_per_day} a day, {phase.max_total} in all, counts {Counting(phase.counting).label}, "
            f"board {Visibility(phase.visibility).label}"
        )
        if phase.gold is not None:
            counts = ", ".join(f"{label} {count:,}" for label, count in phase.gold_counts)
            lines.append(f"      gold: {phase.gold.source}, {phase.gold_items:,} items ({counts})")
        else:
            lines.append(f"      gold: none ({phase.gold_problem})")
        for data_file in phase.data_files:
            lines.append(f"      data file: {data_file.title or data_file.name} ({len(data_file.content):,} bytes)")
    if plan.teams or plan.runs:
        lines.append(f"  {len(plan.teams)} team(s), {len(plan.runs)} run(s)")
    for question in plan.questions:
        lines.append(
            f"  {question.phase}: reference file {question.file} read with ids from {question.id_column!r} and "
            f"labels from {question.label_column!r} (a guess: --columns to choose)"
        )
    if plan.notes:
        lines.append("Could not come over, or changed on the way:")
        lines += [f"  - {note}" for note in plan.notes]
    return lines
