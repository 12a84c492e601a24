"""Sign-up. Log-in is Django's own view, throttled by django-axes (``leaderboard.throttling``)."""

from __future__ import annotations

from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from leaderboard.forms import SignupForm

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"
"""Named when logging in a new user: with axes' backend first there are two, and Django asks which."""


def _safe_next(request: HttpRequest) -> str | None:
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend=MODEL_BACKEND)
        return redirect(_safe_next(request) or "leaderboard:task_list")
    return render(request, "registration/signup.html", {"form": form, "next": _safe_next(request) or ""})
