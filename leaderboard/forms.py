"""Forms: parse and shape input; the services decide what is allowed."""

from __future__ import annotations

from dataclasses import replace

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import PasswordResetForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.template.loader import render_to_string

from leaderboard import errors
from leaderboard.addresses import client_address
from leaderboard.bundles.plan import EVERY_TRACK, FilePlan, ReferenceChoice
from leaderboard.bundles.tracks import EVERY_SUBTASK, grouped
from leaderboard.models import PRIMARY, Phase, Task, Team, metric_choices
from leaderboard.names import canonical_name
from leaderboard.selectors.runs import ALL_RUNS, COUNTING_RUNS
from leaderboard.services.notifications import email_send_later
from leaderboard.services.tasks import (
    PHASE_DEFAULT_NAME,
    PHASE_DEFAULT_SLUG,
    PHASE_SETTINGS_FIELDS,
    TASK_SETTINGS_FIELDS,
)
from leaderboard.uploads import outputs_of_gold


class UploadField(forms.FileField):
    """A file field that refuses files over the size limit before reading them."""

    def clean(self, data, initial=None):
        upload = super().clean(data, initial)
        if upload is not None and upload.size > settings.MAX_UPLOAD_BYTES:
            raise ValidationError(
                errors.FILE_TOO_LARGE.format(size=upload.size, limit=settings.MAX_UPLOAD_BYTES),
                code=errors.FILE_TOO_LARGE.code,
            )
        return upload


DATETIME_WIDGET = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


class TaskSettingsForm(forms.ModelForm):
    """The task's own settings; each phase has its own form. A subtask's registration and terms
    are its parent's; a task divided into subtasks ranks nothing itself (no primary metric)."""

    class Meta:
        model = Task
        fields = list(TASK_SETTINGS_FIELDS)
        widgets = {"description": forms.Textarea(attrs={"rows": 6})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["primary_metric"].choices = metric_choices(ordinal=self.instance.ordinal)
        self.fields["terms"].widget = forms.Textarea(attrs={"rows": 6})
        if self.instance.is_subtask:
            del self.fields["registration"], self.fields["terms"]
        elif self.instance.pk and self.instance.subtasks.exists():
            del self.fields["primary_metric"], self.fields["overall_method"], self.fields["overall_columns"]


class PhaseSettingsForm(forms.ModelForm):
    """The settings of a phase an organiser may change at any time."""

    class Meta:
        model = Phase
        fields = list(PHASE_SETTINGS_FIELDS)
        widgets = {
            "opens_at": DATETIME_WIDGET,
            "closes_at": DATETIME_WIDGET,
            "description": forms.Textarea(attrs={"rows": 3}),
        }
        help_texts = {"opens_at": "UTC", "closes_at": "UTC; uploads after this moment are refused"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        optional_split(self)
        self.fields["feedback"].required = False

    def clean_feedback(self) -> str | None:
        """Left blank, the feedback policy stays as it is."""
        return self.cleaned_data.get("feedback") or self.instance.feedback

    def clean_private_percent(self) -> int:
        """Left blank, the split stays as it is."""
        value = self.cleaned_data.get("private_percent")
        return self.instance.private_percent if value is None else value

    def clean_final_part(self) -> str:
        return self.cleaned_data.get("final_part") or self.instance.final_part

    def clean_contrastive_runs(self) -> int:
        value = self.cleaned_data.get("contrastive_runs")
        return self.instance.contrastive_runs if value is None else value


def optional_split(form: forms.ModelForm) -> None:
    """The public/private split and contrastive runs are optional on every phase form (blank:
    none, or as they are)."""
    form.fields["private_percent"].required = False
    form.fields["private_percent"].label = "Private share of the test set (%)"
    form.fields["final_part"].required = False
    form.fields["final_part"].label = "Final ranking on"
    form.fields["contrastive_runs"].required = False
    form.fields["contrastive_runs"].label = "Contrastive runs per team"


def _feedback_from_visibility(form: forms.ModelForm) -> None:
    form.fields["feedback"].choices = [("", "as the visibility suggests"), *Phase.Feedback.choices]


GOLD_HELP = (
    "CSV or TSV with the header id,label; never shown to participants. Optional: without it the phase waits for "
    "its gold file (no upload, no leaderboard) until you give it from the task page"
)


def gold_field() -> UploadField:
    return UploadField(label="Gold file", required=False, help_text=GOLD_HELP)


def gold_arguments(upload) -> dict:
    """A form's gold file as the services take it: none given, the phase waits for it."""
    return {} if upload is None else {"gold_name": upload.name, "gold_content": upload.read()}


class PhaseCreateForm(PhaseSettingsForm):
    """A new phase: its settings, address and gold file (or none yet: it waits for it). Left
    blank, the feedback policy follows the visibility (full for a public board, validated only
    for a hidden one)."""

    slug = forms.SlugField(max_length=40, help_text="the phase's address: letters, digits, hyphens")
    gold = gold_field()

    field_order = ["name", "slug", "description", "gold"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _feedback_from_visibility(self)

    def clean_feedback(self) -> str | None:
        """Left blank, the service chooses from the visibility."""
        return self.cleaned_data.get("feedback") or None

    def service_arguments(self) -> dict:
        """The keyword arguments of :func:`leaderboard.services.tasks.phase_create` (but the task)."""
        data = self.cleaned_data
        return {
            **{name: data[name] for name in PHASE_SETTINGS_FIELDS},
            "slug": data["slug"],
            **gold_arguments(data["gold"]),
        }


ONE_LABEL, OUTPUTS = "one", "outputs"
"""The two kinds of task: one label an item, or several (an output per column)."""


class TaskCreateForm(forms.ModelForm):
    """A new task and its first phase: the task's address, kind, labels (or outputs) and primary
    metric, the phase's gold file, dates, limits and policies. More phases are added from the
    task page."""

    slug = forms.SlugField(max_length=60, help_text="the task's address: letters, digits, hyphens")
    kind = forms.ChoiceField(
        label="Labels an item",
        choices=[
            (ONE_LABEL, "One: the files have an id and a label column"),
            (
                OUTPUTS,
                "Several: the files have an id and one column per output, each with labels of its own (an output of "
                "0 and 1 is a label of a multi-label task, 1 present)",
            ),
        ],
        initial=ONE_LABEL,
        required=False,
        widget=forms.RadioSelect,
    )
    labels = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text="the label set in order, one per line or separated by commas; several labels an item: the outputs "
        "are the gold file's columns, their labels read from it unless given here, one output a line as "
        "“output: a, b, c” (every output, for a phase without a gold file yet)",
    )
    phase_name = forms.CharField(
        max_length=80, initial=PHASE_DEFAULT_NAME, help_text="the first phase, e.g. Practice, Development, Evaluation"
    )
    phase_slug = forms.SlugField(max_length=40, initial=PHASE_DEFAULT_SLUG, help_text="the first phase's address")
    gold = gold_field()

    field_order = [
        "title",
        "slug",
        "description",
        "kind",
        "labels",
        "ordinal",
        "primary_metric",
        "registration",
        "terms",
        "phase_name",
        "phase_slug",
        "gold",
    ]

    class Meta:
        model = Phase
        fields = [name for name in PHASE_SETTINGS_FIELDS if name not in ("name", "description")]
        widgets = PhaseSettingsForm.Meta.widgets
        help_texts = PhaseSettingsForm.Meta.help_texts

    title = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), required=False)
    primary_metric = forms.ChoiceField(choices=metric_choices, initial="macro_f1")
    ordinal = forms.BooleanField(
        required=False,
        label="The labels are an ordered scale",
        help_text=Task._meta.get_field("ordinal").help_text,
    )
    registration = forms.ChoiceField(choices=Task.Registration.choices, initial=Task.Registration.OPEN)
    terms = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
        help_text=Task._meta.get_field("terms").help_text,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["feedback"].required = False
        self.fields["registration"].required = False
        optional_split(self)
        _feedback_from_visibility(self)

    def clean_feedback(self) -> str | None:
        """Left blank, the service chooses from the visibility."""
        return self.cleaned_data.get("feedback") or None

    def clean_registration(self) -> str:
        return self.cleaned_data.get("registration") or Task.Registration.OPEN

    def clean_private_percent(self) -> int:
        return self.cleaned_data.get("private_percent") or 0

    def clean_final_part(self) -> str:
        return self.cleaned_data.get("final_part") or Phase.FinalPart.PRIVATE

    def clean_contrastive_runs(self) -> int:
        return self.cleaned_data.get("contrastive_runs") or 0

    def cleaned_labels(self) -> list[str]:
        raw = self.cleaned_data["labels"].replace(",", "\n")
        return [line.strip() for line in raw.splitlines() if line.strip()]

    def clean(self) -> dict:
        """A task of one label column needs its labels; one of several outputs takes its outputs
        from the gold file (or, without one yet, from the labels given for each)."""
        data = super().clean()
        if data.get("kind") == OUTPUTS:
            given: dict[str, list[str]] = {}
            for line in (data.get("labels") or "").splitlines():
                if line.strip():
                    name, _, labels = line.partition(":")
                    given[name.strip()] = [label.strip() for label in labels.split(",") if label.strip()]
            upload = data.get("gold")
            content = None if upload is None else upload.read()
            if upload is not None:
                upload.seek(0)
            try:
                data["outputs"] = outputs_of_gold(content=content, given=given)
            except ValidationError as error:
                self.add_error(None, error)
        elif not (data.get("labels") or "").strip():
            self.add_error("labels", errors.TOO_FEW_LABELS.plain())
        return data

    def service_arguments(self) -> dict:
        """The keyword arguments of :func:`leaderboard.services.tasks.task_create`."""
        data = self.cleaned_data
        return {
            **{name: data[name] for name in self.Meta.fields},
            "title": data["title"],
            "description": data["description"],
            "primary_metric": data["primary_metric"],
            "registration": data["registration"],
            "terms": data["terms"],
            "slug": data["slug"],
            **({"outputs": data["outputs"]} if data.get("kind") == OUTPUTS else {"labels": self.cleaned_labels()}),
            "ordinal": data["ordinal"],
            "phase_name": data["phase_name"],
            "phase_slug": data["phase_slug"],
            **gold_arguments(data["gold"]),
        }


class SubtaskCreateForm(TaskCreateForm):
    """A new subtask of a task divided into subtasks: a task's form without registration and
    terms, which are the parent's."""

    field_order = [name for name in TaskCreateForm.field_order if name not in ("registration", "terms")]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        del self.fields["registration"], self.fields["terms"]

    def service_arguments(self) -> dict:
        self.cleaned_data.update(registration=Task.Registration.OPEN, terms="")
        return super().service_arguments()


class TaskWithSubtasksForm(forms.ModelForm):
    """A task divided into subtasks: what they share (registration, terms, teams, announcements);
    each subtask is added from the task's page with its labels, metric and phases."""

    class Meta:
        model = Task
        fields = ["title", "slug", "description", "registration", "terms"]
        widgets = {"description": forms.Textarea(attrs={"rows": 6}), "terms": forms.Textarea(attrs={"rows": 4})}
        help_texts = {"slug": "the task's address: letters, digits, hyphens"}

    def validate_unique(self) -> None:
        """The service says when the address is taken, in its own words."""


class PhaseFileForm(forms.Form):
    title = forms.CharField(max_length=120, required=False, help_text="e.g. test inputs (no labels), licence")
    file = UploadField(label="File", help_text="shown to everyone who can see the task; never the gold file")


class GoldReplaceForm(forms.Form):
    gold = UploadField(label="New gold file", help_text="same labels; every submission is scored again")

    def __init__(self, *args, phase: Phase, **kwargs):
        super().__init__(*args, **kwargs)
        if phase.waits_for_gold:
            self.fields["gold"].label = "Gold file"
            self.fields["gold"].help_text = "CSV or TSV with the header id,label; never shown to participants"


class RunsArchiveForm(forms.Form):
    """Which runs of a phase go into its archive: every run or those that count, of every team
    (none ticked) or of the teams ticked."""

    runs = forms.ChoiceField(
        choices=[(ALL_RUNS, "every run"), (COUNTING_RUNS, "only the runs that count (each team's run on the board)")],
        initial=ALL_RUNS,
        required=False,
        widget=forms.RadioSelect,
        label="Runs",
    )
    team = forms.ModelMultipleChoiceField(
        queryset=Team.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Teams",
        help_text="none ticked: every team",
    )

    def __init__(self, *args, task: Task, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = task.community.teams

    def which(self) -> str:
        return self.cleaned_data.get("runs") or ALL_RUNS

    def team_ids(self) -> frozenset[int] | None:
        """The teams ticked, or ``None`` for every team."""
        teams = self.cleaned_data.get("team")
        return frozenset(team.pk for team in teams) if teams else None


class BundleUploadForm(forms.Form):
    bundle = forms.FileField(
        label="Bundle (.zip)",
        help_text="a task exported from this site, or a CodaLab (competition.yaml v1.5) or Codabench (version 2) "
        "competition bundle; you see what it creates before anything is",
    )

    def clean_bundle(self):
        upload = self.cleaned_data["bundle"]
        if upload.size > settings.BUNDLE_MAX_BYTES:
            raise errors.BUNDLE_TOO_LARGE.plain(size=upload.size, limit=settings.BUNDLE_MAX_BYTES)
        return upload


class TaskImportForm(forms.Form):
    """The organiser's answers to an import's preview: the new address and title, the dates
    (as they are, or moved to a first opening day), the runs, the primary metric and labels'
    order, and for each phase of a competition bundle how to read its reference data, a gold
    file given instead, and (where phases ran side by side) its track."""

    form_id = "import-choices"
    """The form's id: the selects of tracks stand outside it, in the table of tracks."""
    slug = forms.SlugField(max_length=60, label="Address", help_text="the new task's address: /tasks/<address>/")
    title = forms.CharField(max_length=200, required=False, help_text="left empty: the bundle's")
    first_opens = forms.DateField(
        required=False,
        label="First phase opens on",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="left empty: every date as in the bundle; else every date moves by the same number of days "
        "(next year's edition)",
    )
    with_runs = forms.BooleanField(required=False, label="With its teams and runs", initial=True)
    primary_metric = forms.ChoiceField(choices=metric_choices, label="Primary metric")
    labels = forms.CharField(
        max_length=2000,
        required=False,
        label="Labels, in order",
        help_text="comma-separated; their order is the task's. Needed where the bundle states none (its reference "
        "data holds no labels yet)",
    )

    def __init__(self, *args, plan, options, exported: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.plan, self.options, self.exported = plan, options, exported
        self.initial.update(
            slug=options.slug,
            title=options.title or plan.title,
            first_opens=options.first_opens,
            with_runs=options.with_runs,
            primary_metric=plan.primary_metric,
            labels=", ".join(plan.labels),
        )
        if not exported:
            del self.fields["with_runs"]
        else:
            del self.fields["labels"]
        if plan.divided and exported:  # each subtask keeps its labels and primary metric
            del self.fields["primary_metric"]
        for question in plan.questions:
            prefix = f"ref-{question.phase_index}"
            files = [(name, name) for name in question.files]
            columns = [(column, column) for column in question.columns]
            for part, choices, initial, label in (
                ("file", files, question.file, "Reference file"),
                ("id", columns, question.id_column, "Ids in"),
                ("label", columns, question.label_column, "Labels in"),
            ):
                self.fields[f"{prefix}-{part}"] = forms.ChoiceField(
                    choices=choices, initial=initial, label=label, required=False
                )
        if not exported:
            waiting = {phase.name for _, phase in plan.waiting()}
            for index, name in enumerate(plan.bundle_phases):
                self.fields[f"gold-{index}"] = UploadField(
                    required=False,
                    label=f"Gold file of “{name}”",
                    help_text="id,label CSV or TSV"
                    + (
                        "; or none yet: the phase waits for it"
                        if name in waiting
                        else "; instead of the one read above"
                    ),
                )
        tracks = [(str(number), f"{number}. {name}") for number, name in enumerate(plan.tracks, start=1)]
        for choice in plan.track_choices:
            label = f"Track of “{choice.phase}”"
            self.fields[f"track-{choice.phase_index}"] = forms.ChoiceField(
                choices=[*tracks, (EVERY_TRACK, EVERY_SUBTASK)],
                initial=choice.track,
                required=False,
                label=label,
                # the selects stand in the table of tracks, above the form, each labelled by itself
                widget=forms.Select(attrs={"form": self.form_id, "aria-label": label}),
            )

    def main_fields(self) -> list:
        return [
            self[name]
            for name in ("slug", "title", "first_opens", "with_runs", "primary_metric", "labels")
            if name in self.fields
        ]

    def questions(self) -> list:
        """Each question of the plan with its fields, for the page."""
        return [
            (question, [self[f"ref-{question.phase_index}-{part}"] for part in ("file", "id", "label")])
            for question in self.plan.questions
        ]

    def gold_fields(self) -> list:
        return [self[name] for name in self.fields if name.startswith("gold-")]

    def track_rows(self) -> list:
        """Each phase of a competition whose phases ran side by side, with its track's field."""
        return [(choice, self[f"track-{choice.phase_index}"]) for choice in self.plan.track_choices]

    def chosen_tracks(self) -> dict[int, str]:
        """The organiser's tracks: those chosen before, and each phase moved now (a phase left
        where the preview put it keeps how it was put there)."""
        chosen = dict(self.options.tracks)
        for choice in self.plan.track_choices:
            track = self.cleaned_data.get(f"track-{choice.phase_index}") or choice.track
            if track != choice.track or choice.phase_index in chosen:
                chosen[choice.phase_index] = track
        return chosen

    def clean(self):
        """Refused where two phases that open at the same moment are put in one track, naming both."""
        data = super().clean()
        if self.plan.tracks:
            chosen = self.chosen_tracks()
            grouped(
                [
                    replace(choice, track=chosen.get(choice.phase_index, choice.track))
                    for choice in self.plan.track_choices
                ],
                len(self.plan.tracks),
            )
        return data

    def import_options(self):
        """The answers as :class:`ImportOptions`, and the gold files given (by phase index)."""
        data = self.cleaned_data
        references = dict(self.options.references)
        for question in self.plan.questions:
            prefix = f"ref-{question.phase_index}"
            references[question.phase_index] = ReferenceChoice(  # a choice left out keeps the current one
                data[f"{prefix}-file"] or question.file,
                data[f"{prefix}-id"] or question.id_column,
                data[f"{prefix}-label"] or question.label_column,
            )
        golds = {}
        for index in range(len(self.plan.bundle_phases)):
            upload = data.get(f"gold-{index}")
            if upload is not None:
                golds[index] = FilePlan(name=upload.name, content=upload.read(), source=f"given: {upload.name}")
        options = replace(
            self.options,
            slug=data["slug"],
            title=data["title"] if data["title"] != self.plan.title else "",
            first_opens=data["first_opens"],
            with_runs=data.get("with_runs", True),
            primary_metric=data.get("primary_metric", ""),
            labels=tuple(label.strip() for label in data.get("labels", "").split(",") if label.strip()),
            references=references,
            tracks=self.chosen_tracks(),
        )
        return options, golds


class TeamCreateForm(forms.Form):
    name = forms.CharField(max_length=80, help_text="shown on the leaderboard")


class TeamJoinForm(forms.Form):
    invite_code = forms.CharField(max_length=24, help_text="ask a member of the team for it")


class SubmissionForm(forms.Form):
    """An upload; in a phase with contrastive runs (``phase``), what the run is."""

    file = UploadField(
        label="Prediction file",
        help_text="CSV or TSV: id,label — or id plus one probability column per label",
    )
    description = forms.CharField(max_length=200, required=False, help_text="optional: what this run is")
    mark = forms.ChoiceField(
        label="Run",
        required=False,
        help_text="the primary run counts; contrastive runs are listed under the team, never ranked",
    )

    def __init__(self, *args, phase: Phase | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        choices = phase.run_marks() if phase is not None else []
        if choices:
            self.fields["mark"].choices = choices
            self.fields["mark"].initial = PRIMARY
        else:
            del self.fields["mark"]


def email_field(**options) -> forms.EmailField:
    return forms.EmailField(
        label="E-mail address",
        max_length=254,
        error_messages={"required": errors.EMAIL_REQUIRED, "invalid": errors.EMAIL_INVALID},
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        **options,
    )


def unused_email(value: str, *, owner=None) -> str:
    """``value`` with its domain in lower case, if no other account has it, whatever its case."""
    user_model = get_user_model()
    email = user_model.objects.normalize_email(value)
    if user_model.objects.filter(email__iexact=email).exclude(pk=getattr(owner, "pk", None)).exists():
        raise errors.EMAIL_TAKEN.plain()
    return email


class SignupForm(UserCreationForm):
    """Django's sign-up with a required e-mail address that no other account has (compared
    without case): password-reset links and scoring notices go there. The user name field is
    NFKC-normalised and names that differ only in case are refused; a name with characters a
    reader cannot see gets a message naming them."""

    email = email_field(help_text="for password-reset links and news of your submissions; not shown to other teams")

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")

    def clean_username(self):
        canonical_name(self.cleaned_data.get("username") or "", field=None)
        return super().clean_username()

    def clean_email(self) -> str:
        return unused_email(self.cleaned_data["email"])


class EmailChangeForm(forms.Form):
    """A new address for an account; it must be confirmed again."""

    email = email_field(help_text="a new address has to be confirmed again")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["email"].initial = user.email
        if settings.EMAIL_VERIFICATION == "none":
            self.fields["email"].help_text = ""

    def clean_email(self) -> str:
        return unused_email(self.cleaned_data["email"], owner=self.user)


class QueuedPasswordResetForm(PasswordResetForm):
    """Django's password reset, with its e-mail handed to the tasks queue: with RQ workers the
    request never waits for the SMTP server (nor shows by its timing whether an account exists).
    Within the e-mail limits per recipient and per asking address; past them nothing is sent,
    and the page says what it always says (whether an account exists stays unknown)."""

    email = email_field()
    requested_from: str | None = None

    def save(self, *args, request=None, **kwargs):
        self.requested_from = client_address(request) if request is not None else None
        return super().save(*args, request=request, **kwargs)

    def send_mail(
        self, subject_template_name, email_template_name, context, from_email, to_email, html_email_template_name=None
    ) -> None:
        subject = "".join(render_to_string(subject_template_name, context).splitlines())
        body = render_to_string(email_template_name, context)
        email_send_later(subject=subject, body=body, recipient=to_email, requested_from=self.requested_from)


class TeamProfileForm(forms.ModelForm):
    """A team's name and the system description SemEval asks every team for."""

    paper_url = forms.URLField(
        required=False, assume_scheme="https", label="Paper link", help_text="the system description paper, later"
    )

    class Meta:
        model = Team
        fields = ["name", "system_name", "system_description", "paper_url"]
        widgets = {"system_description": forms.Textarea(attrs={"rows": 4})}

    def validate_unique(self) -> None:
        """Uniqueness of the name is the service's to check (whatever its case or width)."""


class SubmissionNoteForm(forms.Form):
    note = forms.CharField(max_length=200, required=False, help_text="what this run was")


class RegistrationForm(forms.Form):
    accept_terms = forms.BooleanField(required=False, label="I accept the terms above")


class AnnouncementForm(forms.Form):
    title = forms.CharField(max_length=200)
    body = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}), help_text="plain text; shown as written, line breaks kept"
    )
    email = forms.BooleanField(required=False, label="Also e-mail it to every participant (except those who opted out)")
