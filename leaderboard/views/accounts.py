"""Sign-up and a log-in view that slows down password guessing."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from leaderboard.forms import SignupForm

TOO_MANY_ATTEMPTS = "Too many failed log-ins for this account from your address; try again in {minutes} minutes."


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
        login(request, user)
        return redirect(_safe_next(request) or "leaderboard:task_list")
    return render(request, "registration/signup.html", {"form": form, "next": _safe_next(request) or ""})


class RateLimitedLoginView(LoginView):
    """Django's log-in, refusing further attempts after LOGIN_RATE_LIMIT failures for one user
    name from one address within LOGIN_RATE_WINDOW seconds (HTTP 429)."""

    def _key(self) -> str:
        username = self.request.POST.get("username", "").strip().lower()
        return f"login-failures:{self.request.META.get('REMOTE_ADDR', '')}:{username}"

    def post(self, request, *args, **kwargs):
        if cache.get(self._key(), 0) >= settings.LOGIN_RATE_LIMIT:
            form = self.get_form()
            form.errors.clear()
            form.add_error(None, TOO_MANY_ATTEMPTS.format(minutes=max(1, settings.LOGIN_RATE_WINDOW // 60)))
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        key = self._key()
        cache.add(key, 0, settings.LOGIN_RATE_WINDOW)
        cache.incr(key)
        return super().form_invalid(form)
