"""Bundles the bundle tests build: zips from a mapping of paths to bytes (with links, lying
headers and other hostile entries where a test needs them), and competition bundles written
in the documented formats of CodaLab (competition.yaml v1.5) and Codabench (version 2)."""

from __future__ import annotations

import io
import zipfile

import yaml

from leaderboard.zipstream import ZipEntry, zip_bytes


def zip_of(files: dict[str, bytes], *, links: tuple[str, ...] = ()) -> bytes:
    """A zip of ``files`` (deflated), with ``links`` added as Unix symbolic links to /etc/passwd."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, content in files.items():
            archive.writestr(path, content)
        for path in links:
            info = zipfile.ZipInfo(path)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, b"/etc/passwd")
    return out.getvalue()


def streamed_zip(files: dict[str, bytes]) -> bytes:
    """The same, written as the site streams its archives (data descriptors)."""
    return zip_bytes(ZipEntry(path, content) for path, content in files.items())


def labels_csv(pairs: list[tuple[str, str]], *, header: str = "id,label", delimiter: str = ",") -> bytes:
    lines = [header] if header else []
    lines += [f"{item}{delimiter}{label}" for item, label in pairs]
    return ("\n".join(lines) + "\n").encode()


GOLD_PAIRS = [(f"s{i:02d}", "pos" if i % 3 == 0 else ("neg" if i % 3 == 1 else "neu")) for i in range(1, 13)]


def codalab_v15(*, reference: bytes | None = None, extra: dict | None = None, end_date: str | None = None) -> bytes:
    """A result-submission competition in CodaLab's competition.yaml v1.5: HTML pages, two
    phases (the second starts when the first ends), reference data as zips inside the bundle."""
    document = {
        "title": "Sentiment 2025",
        "description": "Classify short texts.",
        "image": "logo.png",
        "has_registration": True,
        "force_submission_to_leaderboard": True,
        "competition_docker_image": "codalab/codalab-legacy:py37",
        "end_date": end_date,
        "html": {
            "overview": "overview.html",
            "evaluation": "evaluation.html",
            "terms": "terms.html",
            "data": "data.html",
        },
        "phases": {
            1: {
                "phasenumber": 1,
                "label": "Development",
                "description": "Tune your system.",
                "start_date": "2025-01-10",
                "max_submissions": 50,
                "max_submissions_per_day": 5,
                "reference_data": "reference_1.zip",
                "scoring_program": "scoring_program.zip",
                "public_data": "public_data.zip",
            },
            2: {
                "phasenumber": 2,
                "label": "Final",
                "start_date": "2025-02-10 12:00:00+00:00",
                "max_submissions": 3,
                "max_submissions_per_day": 0,
                "reference_data": "reference_2.zip",
                "scoring_program": "scoring_program.zip",
            },
        },
        "leaderboard": {
            "leaderboards": {"RESULTS": {"label": "Results", "rank": 1}},
            "columns": {"f1": {"leaderboard": {"label": "Results", "rank": 1}, "label": "F1", "rank": 1}},
        },
        **(extra or {}),
    }
    gold = reference if reference is not None else labels_csv(GOLD_PAIRS)
    return zip_of(
        {
            "competition.yaml": yaml.safe_dump(document).encode(),
            "overview.html": b"<h1>Sentiment</h1><p>Texts are <b>short</b>.</p><script>alert('x')</script>",
            "evaluation.html": b"<p>Macro F1, see <a href='https://example.org/f1'>the definition</a>.</p>",
            "terms.html": b"<p>Cite the overview paper.</p>",
            "data.html": b"<ul><li>train</li><li>test</li></ul>",
            "logo.png": b"\x89PNG not really",
            "reference_1.zip": zip_of({"truth.csv": gold}),
            "reference_2.zip": zip_of({"truth.csv": gold}),
            "scoring_program.zip": zip_of({"score.py": b"print('score')"}),
            "public_data.zip": zip_of({"test.txt": b"s01 a text"}),
        }
    )


def codabench_v2(
    *, reference: bytes | None = None, folder: str = "", hidden: bool = False, development_ends: str = "2-15-2026"
) -> bytes:
    """A result-submission competition in Codabench's version 2: Markdown pages, tasks holding
    each phase's reference data in folders, phases with start and end (the development phase's
    end may be after the final phase opens: ``development_ends``)."""
    document = {
        "version": 2,
        "title": "Wheat seeds",
        "description": "Classify wheat seeds.",
        "image": "logo.png",
        "registration_auto_approve": True,
        "docker_image": "codalab/codalab-legacy:py39",
        "terms": "pages/terms.md",
        "pages": [{"title": "Overview", "file": "pages/overview.md"}, {"title": "Data", "file": "pages/data.md"}],
        "phases": [
            {
                "index": 0,
                "name": "Development Phase",
                "start": "1-15-2026",
                "end": development_ends,
                "max_submissions_per_day": 10,
                "max_submissions": 100,
                "tasks": [0],
                "public_data": "public_data",
            },
            {"index": 1, "name": "Final Phase", "start": "2026-02-15", "max_submissions": 2, "tasks": [1]},
        ],
        "tasks": [
            {
                "index": 0,
                "name": "dev",
                "reference_data": "dev_phase/reference_data/",
                "scoring_program": "scoring_program/",
            },
            {
                "index": 1,
                "name": "final",
                "reference_data": "final_phase/reference_data/",
                "scoring_program": "scoring_program/",
            },
        ],
        "leaderboards": [
            {
                "index": 0,
                "title": "Results",
                "key": "main",
                "submission_rule": "Force_Best",
                "hidden": hidden,
                "columns": [{"index": 0, "title": "Accuracy", "key": "accuracy"}],
            }
        ],
    }
    labels = reference if reference is not None else b"0\n1\n2\n1\n0\n2\n2\n1\n0\n"
    files = {
        "competition.yaml": yaml.safe_dump(document).encode(),
        "pages/terms.md": b"# Terms\n\nBe fair.\n",
        "pages/overview.md": b"# Overview\n\nSeeds of **three** kinds.\n",
        "pages/data.md": b"Seven measures per seed.\n",
        "logo.png": b"\x89PNG",
        "dev_phase/reference_data/testing_label": labels,
        "final_phase/reference_data/testing_label": labels,
        "scoring_program/score.py": b"print(1)",
        "public_data/testing_data": b"1 2 3\n",
    }
    return zip_of({(f"{folder}/{path}" if folder else path): content for path, content in files.items()})


# --- competitions whose phases have no gold file this site can read -----------------------------

ARGUMENT_PAIRS = [(f"{1000 + i}_{i % 7}_W{i:03d}", str(i % 3 % 2)) for i in range(1, 31)]


def header_only_v15(*, test_reference: bytes = b"# test_data/truth.txt\n# not yet available\n") -> bytes:
    """A SemEval task on CodaLab (v1.5) before its test labels are final: a trial phase whose
    reference file opens with comment lines, the last naming the columns, then tab-separated
    ids and labels; a test phase, its results hidden, and a post-evaluation phase, both with a
    reference file that holds only a header (comment lines, or a header line)."""
    phase = {"scoring_program": "scoring_program.zip", "max_submissions": 999}
    document = {
        "title": "Argument reasoning 2026",
        "description": "Pick the warrant that completes the argument.",
        "has_registration": True,
        "html": {"overview": "overview.html", "terms": "terms_and_conditions.html"},
        "phases": {
            1: {**phase, "phasenumber": 1, "label": "Trial", "start_date": "2025-06-01", "reference_data": "dev.zip"},
            2: {
                **phase,
                "phasenumber": 2,
                "label": "Test",
                "start_date": "2026-01-08",
                "max_submissions": 1,
                "reference_data": "test.zip",
                "leaderboard_management_mode": "hide_results",
            },
            3: {**phase, "phasenumber": 3, "label": "Post-evaluation", "start_date": "2026-01-30"}
            | {"reference_data": "test.zip", "auto_migration": True},
        },
        "leaderboard": {"columns": {"Accuracy": {"label": "Accuracy", "rank": 1}}},
    }
    dev = b"# dev_data/truth.txt\n# the labels of the dev set\n#id\tcorrectLabelW0orW1\n" + b"".join(
        f"{item}\t{label}\n".encode() for item, label in ARGUMENT_PAIRS
    )
    return zip_of(
        {
            "competition.yaml": yaml.safe_dump(document).encode(),
            "overview.html": b"<p>Two warrants, one right.</p>",
            "terms_and_conditions.html": b"<p>Describe your system in a paper.</p>",
            "dev.zip": zip_of({"truth.txt": dev}),
            "test.zip": zip_of({"truth.txt": test_reference}),
            "scoring_program.zip": zip_of({"metadata": b"command: java -jar scorer.jar"}),
        }
    )


def platform_datasets_v15() -> bytes:
    """A CodaLab (v1.5) competition whose reference data (and scoring program) are datasets kept
    on the platform, named by their keys: the bundle holds no reference data at all."""
    phases = {}
    for number, (label, start, key) in enumerate(
        (
            ("Tweak 1", "2025-01-01 14:00:00", "0d3c1c52-1a5b-4f0e-9d51-5f0a4cbe1111"),
            ("Final 1", "2025-07-19 13:00:00", "0d3c1c52-1a5b-4f0e-9d51-5f0a4cbe2222"),
            ("Tweak 2", "2025-07-19 13:30:00", "0d3c1c52-1a5b-4f0e-9d51-5f0a4cbe3333"),
            ("Valid 2", "2025-07-19 15:00:00", "0d3c1c52-1a5b-4f0e-9d51-5f0a4cbe3333"),
        ),
        start=1,
    ):
        phases[number] = {
            "phasenumber": number,
            "label": label,
            "start_date": start,
            "is_scoring_only": False,
            "max_submissions_per_day": 3,
            "reference_data": key,
            "scoring_program": "5e3a7b21-0c4d-4f5e-8a9b-0c1d2e3f4a5b",
            "ingestion_program": "ingestion_program.zip",
        }
    document = {"title": "AutoML hackathon", "description": "Models on unseen data.", "phases": phases}
    return zip_of(
        {
            "competition.yaml": yaml.safe_dump(document).encode(),
            "ingestion_program.zip": zip_of({"ingestion.py": b"print('run the model')"}),
        }
    )


def codabench_code_v2() -> bytes:
    """A Codabench (version 2) benchmark of code submissions: its ingestion program runs each
    participant's model on several datasets, and its scoring program averages one score over
    them, reading one reference file per dataset (one column each, its header the target's
    name)."""
    document = {
        "version": 2,
        "title": "Mini benchmark",
        "description": "One model, several datasets.",
        "registration_auto_approve": True,
        "docker_image": "codalab/codalab-legacy:py312",
        "terms": "pages/terms.md",
        "pages": [{"title": "Overview", "file": "pages/overview.md"}],
        "tasks": [
            {
                "index": index,
                "name": name,
                "input_data": f"{folder}/input_data",
                "reference_data": f"{folder}/reference_data",
                "scoring_program": "scoring_program",
                "ingestion_program": "ingestion_program",
            }
            for index, (name, folder) in enumerate((("Development Task", "feedback"), ("Final Task", "final")))
        ],
        "phases": [
            {"index": 0, "name": "Development", "start": "1-1-2026", "end": "6-30-2026", "tasks": [0]}
            | {"max_submissions_per_day": 5, "max_submissions": 100, "public_data": "feedback/input_data"}
            | {"starting_kit": "starting_kit"},
            {"index": 1, "name": "Final", "start": "7-1-2026", "tasks": [1], "max_submissions": 0},
        ],
        "leaderboards": [
            {"index": 0, "title": "Results", "key": "Results", "submission_rule": "Force_Last"}
            | {"columns": [{"title": "Average accuracy", "key": "avg", "index": 0}]}
        ],
    }
    files = {
        "competition.yaml": yaml.safe_dump(document).encode(),
        "pages/terms.md": b"Be fair.\n",
        "pages/overview.md": b"# Overview\n",
        "scoring_program/scoring.py": b"print('the mean accuracy over the datasets')",
        "ingestion_program/ingestion.py": b"print('fit and predict')",
        "starting_kit/README.md": b"Submit a model.py.\n",
    }
    for folder in ("feedback", "final"):
        for dataset, target in (("dataset1", "income"), ("dataset2", "y"), ("dataset3", "species")):
            files[f"{folder}/input_data/{dataset}_input_test.csv"] = b"x1,x2\n0.1,0.2\n"
            files[f"{folder}/reference_data/{dataset}_reference_test.csv"] = f"{target}\n0\n1\n1\n0\n".encode()
    return zip_of(files)
