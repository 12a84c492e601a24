"""A multilingual SemEval task as it ran on CodaLab, its tracks side by side: the bundle the tests
of tracks import (``tests/leaderboard/bundles/test_tracks.py``) and the manual shows in the
import preview (``tools/screenshots.py``).

It is written in CodaLab's ``competition.yaml`` v1.5: a trial phase, then a practice phase of
each of four tracks (English and Spanish, subtasks A and B) opening on one day, then an
evaluation phase of each opening together on a later day; each track's phases have their own
reference file and the track's scoring program. Its evaluation phases are listed in another
order than its practice phases, as bundles put together by hand are: the tracks are told by
their names and files, not by their places.
"""

from __future__ import annotations

import yaml

from leaderboard.zipstream import ZipEntry, zip_bytes

TRACKS = (("English", "A"), ("Spanish", "A"), ("English", "B"), ("Spanish", "B"))
"""The tracks, a language and a subtask each, in the order of the practice phases."""
EVALUATION_ORDER = (("English", "A"), ("English", "B"), ("Spanish", "A"), ("Spanish", "B"))
OUTPUT_NAMES = ("HS", "TR", "AG")
"""The columns of a reference file of several outputs (HatEval's: hateful, targeted, aggressive)."""
TRIAL_OPENS, PRACTICE_OPENS, EVALUATION_OPENS, COMPETITION_ENDS = "2025-08-01", "2025-09-01", "2026-01-10", "2026-01-31"
ITEMS = 20


def track_reference(language: str, subtask: str, *, phase: str, outputs: bool = False) -> bytes:
    """A reference file of one track's phase: a TSV of ids and a label (subtask A: three labels;
    B: two), or of ids and three 0/1 columns."""
    prefix = f"{language[:2].lower()}-{phase[:3]}"
    if outputs:
        rows = [f"{prefix}{i:03d}\t{i % 2}\t{i % 3 % 2}\t{int(i % 5 == 0)}" for i in range(1, ITEMS + 1)]
        return ("id\t" + "\t".join(OUTPUT_NAMES) + "\n" + "\n".join(rows) + "\n").encode()
    labels = ("positive", "negative", "neutral") if subtask == "A" else ("positive", "negative")
    rows = [f"{prefix}{i:03d}\t{labels[i % len(labels)]}" for i in range(1, ITEMS + 1)]
    return ("id\tlabel\n" + "\n".join(rows) + "\n").encode()


def zipped(files: dict[str, bytes]) -> bytes:
    return zip_bytes(ZipEntry(path, content) for path, content in files.items())


def tracks_v15(*, outputs_track: tuple[str, str] | None = None) -> bytes:
    """The bundle; ``outputs_track`` (a language and a subtask): the track whose reference files
    hold three 0/1 columns instead of a label."""
    phases = {
        1: {
            "phasenumber": 1,
            "label": "Trial",
            "start_date": TRIAL_OPENS,
            "reference_data": "trial.zip",
            "scoring_program": "scoring_program.zip",
            "max_submissions": 100,
        }
    }
    files = {
        "trial.zip": zipped({"trial_gold.txt": track_reference("English", "A", phase="trial")}),
        "scoring_program.zip": zipped({"evaluate.py": b"print('score')\n"}),
    }
    for phase, opens, order in (
        ("practice", PRACTICE_OPENS, TRACKS),
        ("evaluation", EVALUATION_OPENS, EVALUATION_ORDER),
    ):
        for language, subtask in order:
            number = len(phases) + 1
            track = f"{language[:2].lower()}_{subtask.lower()}"
            reference = f"reference_{phase}_{track}.zip"
            phases[number] = {
                "phasenumber": number,
                "label": f"{phase.capitalize()}-{language}-{subtask}",
                "start_date": opens,
                "reference_data": reference,
                "scoring_program": f"scoring_{track}.zip",
                "max_submissions": 100 if phase == "practice" else 3,
            }
            outputs = outputs_track == (language, subtask)
            files[reference] = zipped({"gold.tsv": track_reference(language, subtask, phase=phase, outputs=outputs)})
            files[f"scoring_{track}.zip"] = zipped({"evaluate.py": f"print('{track}')\n".encode()})
    document = {
        "title": "Hate and sentiment in tweets 2026",
        "description": "Tweets in English and Spanish: their sentiment (subtask A), and hate speech (subtask B).",
        "has_registration": True,
        "end_date": COMPETITION_ENDS,
        "html": {"overview": "overview.html", "terms": "terms.html"},
        "phases": phases,
    }
    files |= {
        "competition.yaml": yaml.safe_dump(document).encode(),
        "overview.html": b"<p>Two languages, two subtasks.</p>",
        "terms.html": b"<p>Cite the task paper.</p>",
    }
    return zipped(files)
