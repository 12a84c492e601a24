"""The API tokens page: a person lists, creates and revokes their tokens. A new token's secret
is shown once, on the page that answers its creation, and never again."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from leaderboard.selectors.tokens import tokens_of
from leaderboard.services.tokens import token_create, token_revoke


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        max_length=80, label="Name", help_text="what the token is for, e.g. “laptop” or “evaluation script”"
    )


@never_cache
@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    form = TokenCreateForm(request.POST or None)
    secret = None
    if request.method == "POST" and form.is_valid():
        try:
            token, secret = token_create(user=request.user, name=form.cleaned_data["name"])
        except ValidationError as error:
            form.add_error(None, error)
        else:
            form = TokenCreateForm()
            messages.success(request, f"The token “{token.name}” is created. Copy its secret now: it is shown once.")
    context = {
        "form": form,
        "secret": secret,
        "tokens": tokens_of(user=request.user),
    }
    return render(request, "registration/api_tokens.html", context)


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = token_revoke(user=request.user, token_id=pk)
    messages.success(request, f"The token “{token.name}” is revoked; requests with it are refused from now on.")
    return redirect("api_tokens")
