"""Forms: parse and shape input; the services decide what is allowed."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError

from leaderboard import errors
from leaderboard.models import Task, metric_choices
from leaderboard.names import canonical_name
from leaderboard.services.tasks import SETTINGS_FIELDS


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
    """The settings an organiser may change at any time."""

    class Meta:
        model = Task
        fields = list(SETTINGS_FIELDS)
        widgets = {
            "opens_at": DATETIME_WIDGET,
            "closes_at": DATETIME_WIDGET,
            "description": forms.Textarea(attrs={"rows": 6}),
        }
        help_texts = {"opens_at": "UTC", "closes_at": "UTC; uploads after this moment are refused"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["feedback"].required = False

    def clean_feedback(self) -> str | None:
        """Left blank, the feedback policy stays as it is."""
        return self.cleaned_data.get("feedback") or self.instance.feedback


class TaskCreateForm(TaskSettingsForm):
    """A new task: its settings, address, labels and gold file. Left blank, the feedback policy
    follows the visibility (full for a public board, validated only for a hidden one)."""

    slug = forms.SlugField(max_length=60, help_text="the task's address: letters, digits, hyphens")
    labels = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="the label set in order, one per line or separated by commas",
    )
    gold = UploadField(label="Gold file", help_text="CSV or TSV with the header id,label; never shown to participants")

    field_order = ["title", "slug", "description", "labels", "gold"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["primary_metric"].choices = metric_choices()
        self.fields["feedback"].choices = [("", "as the visibility suggests"), *Task.Feedback.choices]

    def clean_feedback(self) -> str | None:
        """Left blank, the service chooses from the visibility."""
        return self.cleaned_data.get("feedback") or None

    def cleaned_labels(self) -> list[str]:
        raw = self.cleaned_data["labels"].replace(",", "\n")
        return [line.strip() for line in raw.splitlines() if line.strip()]

    def service_arguments(self) -> dict:
        """The keyword arguments of :func:`leaderboard.services.task_create`."""
        data = self.cleaned_data
        gold = data["gold"]
        settings_fields = {name: data[name] for name in TaskSettingsForm.Meta.fields}
        return {
            **settings_fields,
            "slug": data["slug"],
            "labels": self.cleaned_labels(),
            "gold_name": gold.name,
            "gold_content": gold.read(),
        }


class GoldReplaceForm(forms.Form):
    gold = UploadField(label="New gold file", help_text="same labels; every submission is scored again")


class TeamCreateForm(forms.Form):
    name = forms.CharField(max_length=80, help_text="shown on the leaderboard")


class TeamJoinForm(forms.Form):
    invite_code = forms.CharField(max_length=24, help_text="ask a member of the team for it")


class SubmissionForm(forms.Form):
    file = UploadField(
        label="Prediction file",
        help_text="CSV or TSV: id,label — or id plus one probability column per label",
    )
    description = forms.CharField(max_length=200, required=False, help_text="optional: what this run is")


class SignupForm(UserCreationForm):
    """Django's sign-up: its user name field is NFKC-normalised and names that differ only in
    case are refused; a name with characters a reader cannot see gets a message naming them."""

    def clean_username(self):
        canonical_name(self.cleaned_data.get("username") or "", field=None)
        return super().clean_username()
