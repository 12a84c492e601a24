"""A plan in words: what an import creates, which phases wait for their gold file and why, and
what could not come over, as the command prints it (the preview page shows the same from the
same plan)."""

from __future__ import annotations

from leaderboard.bundles.plan import PhasePlan, TaskPlan, subtask_slug
from leaderboard.bundles.tracks import describe
from leaderboard.models import Counting, Registration, Visibility


def _phase_lines(phase: PhasePlan, indent: str) -> list[str]:
    lines = [
        f"{indent}{phase.name} ({phase.slug}): {phase.opens_at:%Y-%m-%d %H:%M} – {phase.closes_at:%Y-%m-%d %H:%M} "
        f"UTC, {phase.max_per_day} a day, {phase.max_total} in all, counts {Counting(phase.counting).label}, "
        f"board {Visibility(phase.visibility).label}"
    ]
    if phase.gold is not None:
        counts = ", ".join(f"{label} {count:,}" for label, count in phase.gold_counts)
        lines.append(f"{indent}  gold: {phase.gold.source}, {phase.gold_items:,} items ({counts})")
    else:
        lines.append(f"{indent}  gold: none yet, the phase waits for it")
    for data_file in phase.data_files:
        lines.append(f"{indent}  data file: {data_file.title or data_file.name} ({len(data_file.content):,} bytes)")
    return lines


def _labels_text(plan: TaskPlan) -> str:
    if plan.outputs:
        return f"outputs: {plan.scored}"
    return f"labels: {plan.scored or '(none found: --labels)'}"


def _part_lines(plan: TaskPlan, indent: str) -> list[str]:
    lines = [
        f"{indent}{_labels_text(plan)}; primary metric: {plan.primary_metric}",
        f"{indent}{len(plan.phases)} phase(s):",
    ]
    for phase in plan.phases:
        lines += _phase_lines(phase, indent + "  ")
    return lines


def report_lines(plan: TaskPlan, *, slug: str) -> list[str]:
    lines = [
        f"From {plan.source}:",
        f"  task {plan.title!r} at /tasks/{slug}/"
        + (f", divided into {len(plan.subtasks)} subtask(s)" if plan.divided else ""),
        f"  registration: {Registration(plan.registration).label}; terms: "
        + (f"{len(plan.terms):,} characters" if plan.terms else "none"),
    ]
    if plan.divided:
        for subtask in plan.subtasks:
            address = subtask_slug(parent=slug, old_parent=plan.slug, old=subtask.slug)
            lines.append(f"  subtask {subtask.title!r} at /tasks/{address}/:")
            lines += _part_lines(subtask, "    ")
    else:
        lines += _part_lines(plan, "  ")
    runs = sum(len(part.runs) for part in plan.parts())
    if plan.teams or runs:
        lines.append(f"  {len(plan.teams)} team(s), {runs} run(s)")
    if plan.tracks:
        lines.append(
            f"  {len(plan.tracks)} tracks ran side by side there, each holding a phase a subtask here; where each "
            "phase goes (phases count from 1; --track N=T moves phase N to track T, or to every subtask with T=all):"
        )
        for choice in plan.track_choices:
            lines.append(
                f"    {choice.phase_index + 1}. {choice.phase} → {describe(choice, plan.tracks)} ({choice.reason})"
                + (f"; check it: --track {choice.phase_index + 1}=T" if choice.asked else "")
            )
    for question in plan.questions:
        lines.append(
            f"  {question.phase}: reference file {question.file} read with ids from {question.id_column!r} and "
            f"labels from {question.label_column!r} (a guess: --columns to choose)"
        )
    waiting = plan.waiting()
    if waiting:
        lines.append(
            "Waiting for their gold file (no upload, no board until it is given: now with --gold N=FILE, or later"
        )
        lines.append("from the task page):")
        for part, phase in waiting:
            where = f"{part.title}, " if plan.divided else ""
            lines.append(f"  - {where}{phase.name}: {phase.gold_problem or 'none given'}")
    if plan.notes:
        lines.append("Could not come over, or changed on the way:")
        lines += [f"  - {note}" for note in plan.notes]
    return lines
