"""A competition's files: the reference data of each phase as its gold file (which file of a
folder or of a zip inside the bundle, read as :mod:`.reference` says), and the files
participants downloaded (a file, or a folder zipped)."""

from __future__ import annotations

from leaderboard.bundles import reference
from leaderboard.bundles.plan import LINE_NUMBER, OUTPUTS, FilePlan, ReferenceChoice, ReferenceQuestion
from leaderboard.bundles.zips import SafeZip
from leaderboard.uploads import safe_file_name
from leaderboard.zipstream import ZipEntry, zip_bytes

MAX_LABELS = 200
"""More different values than this in a reference file's label column: not a classification's labels."""
LINE_NUMBERS = " (ids: line numbers from 1)"
"""Said of a gold file whose reference file gave no ids."""


def folder_zip(bundle: SafeZip, folder: str) -> bytes:
    """A folder of the bundle as a zip of its own (a Codabench ``public_data`` folder)."""
    prefix = folder.strip("/") + "/"
    return zip_bytes(ZipEntry(path[len(prefix) :], bundle.read(path)) for path in bundle.under(folder))


def download(bundle: SafeZip, path: str, *, title: str) -> FilePlan | None:
    """A file or a folder (zipped) participants downloaded on the other platform, if present."""
    path = path.strip().rstrip("/")
    if bundle.has(path):
        return FilePlan(
            name=safe_file_name(path.rsplit("/", 1)[-1]), content=bundle.read(path), source=path, title=title
        )
    if bundle.under(path):
        return FilePlan(
            name=safe_file_name(f"{path.rsplit('/', 1)[-1]}.zip"),
            content=folder_zip(bundle, path),
            source=path + "/",
            title=title,
        )
    return None


def reference_files(bundle: SafeZip, path: str) -> tuple[SafeZip, list[str]] | str:
    """The bundle (or the zip inside it) holding a phase's reference data and the files in it
    that may be labels, or why there are none."""
    path = path.strip().rstrip("/")
    if bundle.has(path) and path.lower().endswith(".zip"):
        inner = bundle.nested(path)
        files = inner.under("")
        return (inner, files) if files else f"its reference data {path} is an empty zip"
    if bundle.has(path):
        return bundle, [path]
    files = bundle.under(path)
    if not files:
        return f"the bundle has no file or folder {path!r} (a dataset kept on the platform cannot come over)"
    return bundle, files


def _columns(layout: reference.Layout) -> tuple[str, ...]:
    """What the preview offers for a reference file's ids and labels: its columns, and the line
    numbers (for ids) and every label column (outputs) where they can be."""
    if layout.kind != "table":
        return layout.columns
    outputs = (OUTPUTS,) if len(layout.label_columns) >= 2 else ()
    return (LINE_NUMBER, *layout.columns, *outputs)


CODE_WITHOUT_REFERENCE = (
    "participants submitted code there and its scoring program computed the score without reference data"
)
CODE_OVER_FILES = (
    "participants submitted code there and its scoring program computed one score from its {count} reference "
    "files ({files}): none of them alone is the phase's gold file"
)


def gold_of(
    bundle: SafeZip,
    path: str | None,
    choice: ReferenceChoice | None,
    *,
    phase_index: int,
    phase: str,
    code: bool = False,
):
    """A phase's gold file from its reference data, the question the preview asks about it (if
    it cannot tell), and the problem if there is no gold file to be had (the phase then waits
    for one). ``code``: participants submitted code there, which the platform ran."""
    if not path:
        return None, None, CODE_WITHOUT_REFERENCE if code else "it has no reference data"
    found = reference_files(bundle, path)
    if isinstance(found, str):
        return None, None, found
    source, files = found
    chosen = choice.file if choice and choice.file in files else None
    if code and len(files) > 1 and chosen is None:
        names = ", ".join(name.rsplit("/", 1)[-1] for name in files[:4]) + (", …" if len(files) > 4 else "")
        return None, None, CODE_OVER_FILES.format(count=len(files), files=names)
    chosen_file = chosen or next(
        (name for name in files if reference.layout_of(source.read(name)).kind in reference.LABEL_KINDS), files[0]
    )
    content = source.read(chosen_file)
    layout = reference.layout_of(content)
    if layout.kind == reference.HEADER_ONLY:
        return None, None, f"its reference file {chosen_file} {layout.problem}"
    if layout.kind == "unreadable":
        return None, None, f"its reference file {chosen_file} is not a labels file: {layout.problem}"
    id_column = choice.id_column if choice and choice.id_column else layout.id_column
    label_column = choice.label_column if choice and choice.label_column else layout.label_column
    question = None
    if len(files) > 1 or (layout.kind == "table" and not layout.certain):
        question = ReferenceQuestion(
            phase_index=phase_index,
            phase=phase,
            files=tuple(files),
            file=chosen_file,
            columns=_columns(layout),
            id_column=id_column,
            label_column=label_column,
        )
    try:
        gold = reference.gold_csv(content, layout, id_column=id_column, label_column=label_column)
    except reference.ReferenceError as error:
        return None, question, f"its reference file {chosen_file} cannot be read as labels: {error}"
    distinct = max(len(values) for values in reference.columns_in(gold).values())
    if distinct > MAX_LABELS:
        return (
            None,
            question,
            (
                f"its reference file {chosen_file} holds {distinct:,} different values where the labels should be: "
                "not the labels of a classification task"
            ),
        )
    name = safe_file_name(chosen_file.rsplit("/", 1)[-1]).rsplit(".", 1)[0] + "-gold.csv"
    source = f"{path.rstrip('/')}: {chosen_file}"
    if id_column == LINE_NUMBER or layout.kind in ("lines", "one-hot"):
        source += LINE_NUMBERS
    return FilePlan(name=name, content=gold, source=source), question, ""
