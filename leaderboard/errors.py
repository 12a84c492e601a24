"""Every problem a person can fix, as a named constant: its code and its message template.

A :class:`Problem` is its message template (a ``str``), so a test can build the exact message
a page shows with ``errors.DAILY_LIMIT.format(...)``; :meth:`Problem.error` makes the
``ValidationError`` that a service raises, keyed by the form field it belongs to, so a view
hands it to ``form.add_error(None, error)`` and it lands beside that field.
"""

from __future__ import annotations

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError


class Problem(str):
    """A message template with a stable code (the constant's name)."""

    code: str

    def __new__(cls, code: str, template: str) -> Problem:
        problem = super().__new__(cls, template)
        problem.code = code
        return problem

    def error(self, field: str | None = None, **params: object) -> ValidationError:
        """The ``ValidationError`` of this problem for ``field`` (``None``: the whole form)."""
        return ValidationError({field or NON_FIELD_ERRORS: self.plain(**params)})

    def plain(self, **params: object) -> ValidationError:
        """The ``ValidationError`` of this problem for no field in particular (a field's own
        ``clean_<field>`` method raises this one)."""
        return ValidationError(self.format(**params), code=self.code)


def problem_codes(error: ValidationError) -> set[str]:
    """The codes of every problem an error carries, whatever its field."""
    return {item.code for items in error.update_error_dict({}).values() for item in items}


NOT_OPEN_YET = Problem("NOT_OPEN_YET", "The {phase} phase opens for submissions on {opens_at:%Y-%m-%d %H:%M} UTC.")
DEADLINE_PASSED = Problem(
    "DEADLINE_PASSED",
    "The deadline of the {phase} phase passed on {closes_at:%Y-%m-%d %H:%M} UTC; submissions are closed.",
)
WAITS_FOR_GOLD = Problem(
    "WAITS_FOR_GOLD",
    "The {phase} phase waits for its gold file: it takes uploads, and shows its leaderboard, once its organisers "
    "have given it.",
)
DAILY_LIMIT = Problem(
    "DAILY_LIMIT",
    "Your team has used its {limit} submissions for today (UTC); the next day starts at {reset:%H:%M} UTC.",
)
TOTAL_LIMIT = Problem("TOTAL_LIMIT", "Your team has used all {limit} submissions allowed for this task.")
NOT_A_MEMBER = Problem("NOT_A_MEMBER", "You are not a member of this team.")
NO_TEAM = Problem("NO_TEAM", "Join or create a team for this task before you submit.")
ALREADY_IN_TEAM = Problem(
    "ALREADY_IN_TEAM", "You are already in the team {team!r} for this task; a person belongs to one team per task."
)
TOKEN_LIMIT = Problem(
    "TOKEN_LIMIT", "You hold {limit} active tokens, the most allowed; revoke one you no longer use first."
)
TEAM_NAME_TAKEN = Problem("TEAM_NAME_TAKEN", "A team called {name!r} already exists in this task.")
TEAM_NAME_LOOKALIKE = Problem(
    "TEAM_NAME_LOOKALIKE",
    "The name {name!r} looks like the name of the team {other!r} (letters of another script, or look-alike "
    "characters such as a Cyrillic а for a Latin a, or 1 for l): choose a name that reads differently.",
)
BAD_INVITE = Problem("BAD_INVITE", "No team of this task has that invite code.")
FILE_TOO_LARGE = Problem("FILE_TOO_LARGE", "The file is {size:,} bytes; the limit is {limit:,} bytes.")
GOLD_LABEL_UNUSED = Problem(
    "GOLD_LABEL_UNUSED", "The label {label!r} never occurs in the gold file; every class needs gold items."
)
TOO_FEW_LABELS = Problem("TOO_FEW_LABELS", "A task needs at least two labels.")
DUPLICATE_LABEL = Problem("DUPLICATE_LABEL", "The label {label!r} is listed twice.")
BAD_DATES = Problem("BAD_DATES", "A phase must close after it opens.")
PHASES_OVERLAP = Problem(
    "PHASES_OVERLAP",
    "The phase {other!r} runs from {opens_at:%Y-%m-%d %H:%M} to {closes_at:%Y-%m-%d %H:%M} UTC; "
    "the phases of a task follow one another and may not overlap.",
)
PHASE_SLUG_TAKEN = Problem("PHASE_SLUG_TAKEN", "This task has a phase with the address {slug!r} already.")
NO_SUCH_PHASE = Problem("NO_SUCH_PHASE", "This task has no phase {slug!r}; its phases are: {known}.")
PHASES_OF_SUBTASKS = Problem(
    "NO_SUCH_PHASE",
    "This task is divided into subtasks and its phases are theirs: ask a subtask for one of them ({known}).",
)
SLUG_TAKEN = Problem("SLUG_TAKEN", "A task with the address {slug!r} exists already.")
NOT_SCORED = Problem("NOT_SCORED", "Only a scored submission can be chosen.")
HIDDEN_CHARACTERS = Problem(
    "HIDDEN_CHARACTERS",
    "The name holds characters a reader cannot see or that reorder the text ({characters}); remove them.",
)
FILE_EMPTY = Problem("FILE_EMPTY", "The file is empty.")
NAME_EMPTY = Problem("NAME_EMPTY", "The name is empty once spaces are removed.")
TASK_CLOSED = Problem(
    "TASK_CLOSED", "The task's last phase closed on {closes_at:%Y-%m-%d %H:%M} UTC; its teams are fixed."
)
PHASE_CLOSED = Problem(
    "PHASE_CLOSED", "The {phase} phase closed on {closes_at:%Y-%m-%d %H:%M} UTC; the submission that counts is fixed."
)
GOLD_NOT_PENDING = Problem("GOLD_NOT_PENDING", "There is no new gold file waiting for confirmation; upload it again.")
LAST_MEMBER = Problem(
    "LAST_MEMBER", "You are the team's only member; a team with submissions keeps at least one member."
)
REASON_REQUIRED = Problem("REASON_REQUIRED", "Give the reason: the leaderboard shows it.")
ALREADY_DISQUALIFIED = Problem("ALREADY_DISQUALIFIED", "Submission #{pk} is disqualified already.")
ALREADY_REMOVED = Problem("ALREADY_REMOVED", "The team {team!r} is removed already.")
NOT_ORGANISER = Problem("NOT_ORGANISER", "Only the task's organisers may do this.")
EMAIL_REQUIRED = Problem(
    "EMAIL_REQUIRED", "Enter an e-mail address: password-reset links and scoring notices are sent there."
)
EMAIL_INVALID = Problem("EMAIL_INVALID", "Enter a whole e-mail address, such as name@example.org.")
EMAIL_TAKEN = Problem(
    "EMAIL_TAKEN",
    "An account with this e-mail address exists already. Log in, or reset its password if you have forgotten it.",
)
EMAIL_MISSING = Problem(
    "EMAIL_MISSING",
    "Add an e-mail address to your account (your user name at the top of the page) and confirm it before you submit.",
)
EMAIL_NOT_VERIFIED = Problem(
    "EMAIL_NOT_VERIFIED",
    "Confirm your e-mail address before you submit: follow the link sent to {email}, or ask for a new link "
    "on your account page (your user name at the top of the page).",
)
EMAIL_LINK_INVALID = Problem(
    "EMAIL_LINK_INVALID",
    "This confirmation link is not valid: it was cut short or altered. Copy the whole link from the e-mail, "
    "or ask for a new one on your account page.",
)
EMAIL_LINK_EXPIRED = Problem(
    "EMAIL_LINK_EXPIRED",
    "This confirmation link has expired (links last {days} days). Log in and ask for a new one on your account page.",
)
EMAIL_LINK_STALE = Problem(
    "EMAIL_LINK_STALE",
    "This link confirms {email}, which is no longer the address of this account. Use the link sent to the "
    "current address, or ask for a new one on your account page.",
)
NOT_REGISTERED = Problem(
    "NOT_REGISTERED", "Register for this task first: its page shows the terms to accept{approval}."
)
REGISTRATION_PENDING = Problem(
    "REGISTRATION_PENDING", "Your request to take part is waiting for the organisers' approval."
)
REGISTRATION_REFUSED = Problem("REGISTRATION_REFUSED", "The organisers refused your request to take part: {reason}")
TERMS_CHANGED = Problem(
    "TERMS_CHANGED",
    "The task's terms have changed since you accepted them (version {accepted}, now {current}); read and accept "
    "them again on the task's page.",
)
TERMS_NOT_ACCEPTED = Problem("TERMS_NOT_ACCEPTED", "Accept the task's terms to take part.")
ALREADY_REGISTERED = Problem("ALREADY_REGISTERED", "You have registered for this task already ({status}).")
ORGANISERS_DO_NOT_REGISTER = Problem(
    "ORGANISERS_DO_NOT_REGISTER", "You organise this task, so you do not take part in it."
)
ANNOUNCEMENT_EMPTY = Problem("ANNOUNCEMENT_EMPTY", "An announcement needs a title and a text.")
BAD_SPLIT = Problem("BAD_SPLIT", "The private share is a whole percentage from 0 (no split) to {limit}.")
SPLIT_FIXED = Problem(
    "SPLIT_FIXED",
    "The public/private split of a phase is fixed once the phase has opened: scores shown so far were computed on it.",
)
SHAKE_UP_AFTER_CLOSE = Problem(
    "SHAKE_UP_AFTER_CLOSE",
    "The final ranking, and how it differs from the public board, is shown once the phase closes "
    "({closes_at:%Y-%m-%d %H:%M} UTC).",
)

# Subtasks, primary and contrastive runs
CONTRASTIVE_NEEDS_CHOSEN = Problem(
    "CONTRASTIVE_NEEDS_CHOSEN",
    "A phase with contrastive runs ({runs}) counts each team's primary run: set what counts to the submission "
    "the team chose.",
)
HAS_SUBTASKS = Problem(
    "HAS_SUBTASKS",
    "The task “{task}” is divided into subtasks, which hold its phases: add the phase to one of them.",
)
SUBTASK_OF_SUBTASK = Problem(
    "SUBTASK_OF_SUBTASK", "“{task}” is a subtask itself: add the new subtask to “{parent}”, the task it belongs to."
)
HAS_PHASES = Problem(
    "HAS_PHASES",
    "The task “{task}” has phases of its own, so it is one leaderboard: create a task divided into subtasks and "
    "add this one's phases there as its subtasks.",
)
NO_CONTRASTIVE_RUNS = Problem(
    "NO_CONTRASTIVE_RUNS", "The {phase} phase takes no contrastive runs: a team's runs there are not marked."
)
BAD_RUN_MARK = Problem(
    "BAD_RUN_MARK",
    "A run is marked primary or contrastive 1 to {runs} in the {phase} phase; {mark!r} is none of these.",
)
RUN_FAILED = Problem("RUN_FAILED", "Submission #{id} failed: a failed run cannot be marked.")
RUNS_NOT_YOURS = Problem(
    "RUNS_NOT_YOURS",
    "Only the task's organisers download the runs of every team; a team downloads its own runs (join a team first).",
)

# Task bundles and competition bundles: each message names the file, the field and what was expected.
BUNDLE_TOO_LARGE = Problem("BUNDLE_TOO_LARGE", "The bundle is {size:,} bytes; the limit is {limit:,} bytes.")
BUNDLE_NOT_ZIP = Problem("BUNDLE_NOT_ZIP", "{file} is not a zip archive ({details}); a bundle is one .zip file.")
BUNDLE_TOO_MANY_FILES = Problem(
    "BUNDLE_TOO_MANY_FILES", "{file} holds {count:,} files; a bundle may hold at most {limit:,}."
)
BUNDLE_UNSAFE_PATH = Problem(
    "BUNDLE_UNSAFE_PATH",
    "{file}: the path {path!r} {why}; every path of a bundle is relative and stays inside it "
    "(no '..', no leading '/', no drive, no backslash).",
)
BUNDLE_LINK = Problem(
    "BUNDLE_LINK", "{file}: {path!r} is a symbolic link; a bundle holds plain files and folders only."
)
BUNDLE_DUPLICATE = Problem("BUNDLE_DUPLICATE", "{file}: the path {path!r} occurs twice; each file may occur once.")
BUNDLE_RATIO = Problem(
    "BUNDLE_RATIO",
    "{file}: {path!r} expands {ratio:,.0f} times ({size:,} bytes from {compressed:,}); at most {limit:,} times "
    "is allowed for a file above 1 MiB (a zip bomb?).",
)
BUNDLE_EXPANDED_TOO_LARGE = Problem(
    "BUNDLE_EXPANDED_TOO_LARGE", "{file}: its files come to {size:,} bytes once expanded; the limit is {limit:,}."
)
BUNDLE_ENTRY_TOO_LARGE = Problem(
    "BUNDLE_ENTRY_TOO_LARGE", "{file}: {path!r} is {size:,} bytes once expanded; a file may be at most {limit:,}."
)
BUNDLE_ENTRY_DAMAGED = Problem("BUNDLE_ENTRY_DAMAGED", "{file}: {path!r} cannot be read ({details}).")
BUNDLE_NO_MANIFEST = Problem(
    "BUNDLE_NO_MANIFEST",
    "{file} has no task.yaml (a task exported from this site) and no competition.yaml (a CodaLab or Codabench "
    "competition bundle), at its top or in its one top folder.",
)
BUNDLE_YAML_SYNTAX = Problem("BUNDLE_YAML_SYNTAX", "{file}: not valid YAML at line {line}, column {column}: {details}.")
BUNDLE_YAML_TAG = Problem(
    "BUNDLE_YAML_TAG",
    "{file}: line {line}: the tag {tag!r} is refused; a bundle's YAML holds plain values only (text, numbers, "
    "dates, lists, mappings).",
)
BUNDLE_FIELD = Problem("BUNDLE_FIELD", "{file}: {where}: expected {expected}; found {found}.")
BUNDLE_FIELD_MISSING = Problem("BUNDLE_FIELD_MISSING", "{file}: {where} is missing; expected {expected}.")
BUNDLE_MISSING_FILE = Problem("BUNDLE_MISSING_FILE", "{file}: {where} names {path!r}, which is not in the bundle.")
BUNDLE_CHECKSUM = Problem(
    "BUNDLE_CHECKSUM",
    "{file}: {where}: {path!r} has the SHA-256 {found}, not {expected}: the file was changed or damaged.",
)
BUNDLE_FILE_REFUSED = Problem("BUNDLE_FILE_REFUSED", "{file}: {where} ({path}): {details}")
BUNDLE_VERSION = Problem("BUNDLE_VERSION", "{file}: {where} is {found!r}; this site reads {expected}.")
IMPORT_NEEDS_LABELS = Problem(
    "IMPORT_NEEDS_LABELS",
    "The bundle states no labels (no reference file holds two or more): give the task's labels, in order, separated "
    "by commas (the field “Labels, in order”, or --labels).",
)
IMPORT_TRACK_UNKNOWN = Problem(
    "IMPORT_TRACK_UNKNOWN",
    "Phase {number} ({phase}): the track {track!r} is none of this competition's; {known}.",
)
IMPORT_TRACK_SIDE_BY_SIDE = Problem(
    "IMPORT_TRACK_SIDE_BY_SIDE",
    "{phase} and {other} open at the same moment ({opens_at:%Y-%m-%d %H:%M} UTC): they ran side by side, and "
    "cannot follow one another in track {track}; put them in different tracks.",
)
IMPORT_NOT_PENDING = Problem(
    "IMPORT_NOT_PENDING", "This import is no longer waiting for confirmation; upload the bundle again."
)
BAD_FIRST_OPENING = Problem("BAD_FIRST_OPENING", "Give the date the first phase opens as YYYY-MM-DD, e.g. 2026-09-01.")
IMPORTED_RUN_INVALID = Problem(
    "IMPORTED_RUN_INVALID",
    "This run does not match the phase's gold file (it was imported with the task): {details}",
)

# Ordinal tasks
PRIMARY_NEEDS_ORDINAL = Problem(
    "PRIMARY_NEEDS_ORDINAL",
    "{metric} is an error on an ordered scale: rank by it only a task whose labels form one (tick “the labels "
    "are an ordered scale”).",
)
PRIMARY_NEEDS_OUTPUTS = Problem(
    "PRIMARY_NEEDS_OUTPUTS",
    "{metric} reads the items of a task with several outputs{labels}: rank by it only such a task.",
)
TOO_FEW_OUTPUTS = Problem(
    "TOO_FEW_OUTPUTS",
    "A task with several labels an item needs at least two output columns besides the id (found {found}); a task of "
    "one label column is the other kind.",
)
BAD_OUTPUT_LABELS = Problem(
    "BAD_OUTPUT_LABELS",
    "The output {output!r} needs at least two labels, none twice (found {labels}); give them as “{output}: a, b”.",
)
NO_SUCH_OUTPUT = Problem(
    "NO_SUCH_OUTPUT",
    "This task has no output {output!r}; its outputs are: {outputs}. The what-if re-scores one output at a time.",
)
UNKNOWN_OUTPUT = Problem("UNKNOWN_OUTPUT", "The gold file has no output column {output!r} (its outputs: {outputs}).")
BAD_OVERALL = Problem(
    "BAD_OVERALL",
    "The overall ranking cannot be taken over these columns: {why}.",
)
HARDEST_GOLD_IN_USE = Problem(
    "HARDEST_GOLD_IN_USE",
    "The hardest items show gold labels, and the {phase} phase of {task} uses the same gold file until "
    "{closes_at:%Y-%m-%d %H:%M} UTC: they can be published once it has closed.",
)
HARDEST_HIDDEN = Problem(
    "HARDEST_HIDDEN",
    "The hardest items of the {phase} phase show gold labels: only the task's organisers see them until they "
    "publish them, which they may do once every phase that uses the same gold file has closed.",
)
