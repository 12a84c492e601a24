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


def codabench_v2(*, reference: bytes | None = None, folder: str = "", hidden: bool = False) -> bytes:
    """A result-submission competition in Codabench's version 2: Markdown pages, tasks holding
    each phase's reference data in folders, phases with start and end."""
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
                "end": "2-15-2026",
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
