"""What the API answers when it refuses: JSON ``{"code", "message"}`` with the right status.

Messages are named constants (:class:`leaderboard.errors.Problem`), as the pages' are; a
refused upload keeps the very message and code the page shows (``problems`` lists each one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from leaderboard.errors import Problem

UNKNOWN_TASK = Problem("UNKNOWN_TASK", "No task has the address {slug!r}.")
UNKNOWN_SUBMISSION = Problem("UNKNOWN_SUBMISSION", "No submission #{pk} that you may see.")
UNKNOWN_ENDPOINT = Problem("UNKNOWN_ENDPOINT", "No API endpoint at {path}; the list is at /api/docs.")
UNKNOWN_COLUMN = Problem("UNKNOWN_COLUMN", "This task has no column {column!r}; its columns are: {columns}.")
BAD_OVERALL = Problem(
    "BAD_OVERALL",
    "No overall ranking of that kind: {why} (overall: mean_rank, borda or off; over: table8, raw, "
    "calibrated or column ids separated by commas).",
)
RESULTS_HIDDEN = Problem(
    "RESULTS_HIDDEN",
    "The results of the {phase} phase of {title!r} are hidden until {closes_at:%Y-%m-%d %H:%M} UTC, when the "
    "phase closes; "
    "until then only its organisers see the leaderboard, and each team its own submissions.",
)
TOKEN_REQUIRED = Problem(
    "TOKEN_REQUIRED",
    "This needs an API token: send the header 'Authorization: Bearer <token>'. Create one on your account "
    "page (API tokens).",
)
TOKEN_MALFORMED = Problem("TOKEN_MALFORMED", "Send the token as the header 'Authorization: Bearer <token>'.")
TOKEN_INVALID = Problem("TOKEN_INVALID", "This API token is unknown or has been revoked.")
TOKEN_THROTTLED = Problem(
    "TOKEN_THROTTLED", "This token has made {limit} requests in {window} seconds; try again in {wait} seconds."
)
AUTH_THROTTLED = Problem(
    "AUTH_THROTTLED", "Too many requests with a bad token from this address; try again in {wait} seconds."
)
UNKNOWN_TEAM = Problem("UNKNOWN_TEAM", "This task has no team {name!r}.")
RUNS_NEED_ACCOUNT = Problem(
    "RUNS_NEED_ACCOUNT",
    "Runs are for the task's organisers and for each team's members: send 'Authorization: Bearer <token>'.",
)
BAD_TARGET = Problem("BAD_TARGET", "The target class distribution cannot be used: {details}.")
BAD_REQUEST = Problem("BAD_REQUEST", "The request is not valid: {details}")
SUBMISSION_REFUSED = Problem("SUBMISSION_REFUSED", "The file was refused: {details}")
SERVER_ERROR = Problem("SERVER_ERROR", "Something went wrong on our side; the error is logged.")


@dataclass
class ApiError(Exception):
    """A refusal: HTTP ``status``, a problem's ``code`` and its ``message``; ``problems`` lists
    the single problems behind it (field, code, message), ``headers`` go on the response."""

    status: int
    code: str
    message: str
    problems: list[dict[str, str | None]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, status: int, problem: Problem, *, headers: dict[str, str] | None = None, **params: object) -> ApiError:
        return cls(status, problem.code, problem.format(**params), headers=headers or {})

    def body(self) -> dict[str, object]:
        body: dict[str, object] = {"code": self.code, "message": self.message}
        if self.problems:
            body["problems"] = self.problems
        return body
