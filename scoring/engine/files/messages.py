"""Every problem a gold or prediction file can have, as a named message, and the error that
carries one with the file and the line.

Each message is a constant that tests and pages compare against (an error's ``template``); its
text names what was expected. Line numbers are the file's own: its first line, the header, is
line 1, and data row ``k`` is on line ``FIRST_DATA_LINE + k``.
"""

from __future__ import annotations

EMPTY_FILE = "the file is empty"


UNDECODABLE = "the bytes at offset {offset} are not UTF-8 text; save the file as UTF-8"


UTF16 = "the file is UTF-16 text; save it as UTF-8"


MISSING_HEADER = "the first line must be the header 'id,label' (or 'id' and one column per label), found {found!r}"


MISSING_COLUMN = "the header has no {column!r} column (found {found})"


UNEXPECTED_COLUMN = "unexpected column {column!r} in the header; expected {expected}"


DUPLICATE_COLUMN = "the header names the column {column!r} twice"


AMBIGUOUS_ID_COLUMN = (
    "the header names {column!r} twice, and {column!r} is a label as well as the id column, so which column "
    "holds the ids is unclear; write the id column as {suggestion!r} (its name may be written in any case)"
)


NO_ROWS = "the file has a header but no data lines"


FIELD_COUNT = "expected {expected} fields, found {found}"


MALFORMED = "the line cannot be parsed as CSV/TSV ({detail})"


EMPTY_VALUE = "the {column} is empty"


EMPTY_LINE = "the line is empty"


BLANK_BEFORE_HEADER = (
    "the file starts with a blank line; the header (id,label, or id and one column per label) must be on line 1"
)


DUPLICATE_ID = "the id {id!r} appears a second time (first on line {first_line})"


UNKNOWN_LABEL = "unknown label {label!r}; expected one of {labels}"


UNKNOWN_OUTPUT_LABEL = "unknown label {label!r} in the column {column!r}; expected one of {labels}"


UNKNOWN_ID = "the id {id!r} is not in the gold file"


MISSING_IDS = "{count} gold id(s) have no prediction, the first being {id!r} (gold line {gold_line})"


NOT_A_PROBABILITY = "the {column!r} value {value!r} is not a probability between 0 and 1"


PROBABILITIES_DONT_SUM = "the probabilities sum to {total:.6g}, not 1 (allowed deviation {tolerance:g})"


TOO_MANY_LINES = "the file has more than {limit:,} data lines"


OPEN_QUOTE_IN_HEADER = "a quote opened in the header is not closed on its line"
"""The ``detail`` of ``MALFORMED`` for a header whose quoted name would run on into the data."""


UNREADABLE_HEADER = "the header's fields cannot be told apart"
"""The ``detail`` of ``MALFORMED`` should pandas split the header otherwise than this module."""


HEADER_LINE = 1
"""The header's line: the first (a file that starts with a blank line is refused)."""


FIRST_DATA_LINE = HEADER_LINE + 1
"""The line of the first data row: data row ``k`` is on line ``FIRST_DATA_LINE + k``."""


CODES: dict[str, str] = {
    text: name for name, text in list(globals().items()) if name.isupper() and isinstance(text, str)
}
"""Each message's stable code, the name of its constant (``UNKNOWN_ID``): what an error reports
to a program (the site's API and its client), whatever the wording of the message."""
UNNAMED = "INVALID_FILE"
"""The code of a message that is not one of the constants above (none is raised)."""

LONGEST_QUOTED = 200
"""Longest text quoted whole in a message: a 1 MB field is quoted cut, so that the error about
a huge line is not itself huge (it is shown on a page and kept in the session until then)."""


def _shortened(value: object) -> object:
    return value[:LONGEST_QUOTED] + "…" if isinstance(value, str) and len(value) > LONGEST_QUOTED else value


class InputFileError(ValueError):
    """A problem in a gold or prediction file: which file, which line, what was expected.

    ``code`` names the problem for a program (:data:`CODES`); ``params`` keep the values whole;
    the message quotes long ones cut.
    """

    def __init__(self, template: str, *, file: str, line: int | None = None, **params: object) -> None:
        self.template = template
        self.code = CODES.get(template, UNNAMED)
        self.file = file
        self.line = line
        self.params = params
        self.message = template.format(**{key: _shortened(value) for key, value in params.items()})
        where = f"{file}, line {line}" if line is not None else file
        super().__init__(f"{where}: {self.message}")
