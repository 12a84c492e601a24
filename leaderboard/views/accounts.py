"""Sign-up, the account page and e-mail confirmation. Log-in, log-out, password reset and
password change are Django's own views (``leaderboard/urls_accounts.py``); log-in goes through
Django's ``AuthenticationForm``, throttled by django-axes (``leaderboard.throttling``)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from leaderboard.addresses import client_address
from leaderboard.forms import EmailChangeForm, SignupForm
from leaderboard.selectors import notifications as notification_selectors
from leaderboard.services import notifications as notification_service

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"
"""Named when logging in a new user: with axes' backend first there are two, and Django asks which."""

LINK_SENT = {
    "optional": "We sent a link to {email} to confirm the address; the site is yours in the meantime.",
    "mandatory": "We sent a link to {email}: confirm the address before you upload a submission.",
}
"""What a person is told after a confirmation link was sent, by ``EMAIL_VERIFICATION``."""
NOT_SENT = (
    "No link was sent to {email} now: the site has sent it as many e-mails as it may in an hour (so that nobody "
    "can use it to flood an inbox). Ask for one from your account page later."
)


def safe_next(request: HttpRequest) -> str | None:
    """The ``next`` of the request if it stays on this site, else None."""
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


def _site(request: HttpRequest) -> str:
    """Scheme and host of this request: the start of the links in e-mails it sends."""
    return request.build_absolute_uri("/")


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend=MODEL_BACKEND)
        welcome = f"Welcome, {user.get_username()}."
        if notification_service.email_confirmation_send(
            user=user, base_url=_site(request), requested_from=client_address(request)
        ):
            welcome += " " + LINK_SENT[settings.EMAIL_VERIFICATION].format(email=user.email)
        elif settings.EMAIL_VERIFICATION != "none":
            welcome += " " + NOT_SENT.format(email=user.email)
        messages.success(request, welcome)
        return redirect(safe_next(request) or "leaderboard:task_list")
    return render(request, "registration/signup.html", {"form": form, "next": safe_next(request) or ""})


@login_required
def account(request: HttpRequest) -> HttpResponse:
    """The person's name and address, whether it is confirmed, and a form to change it."""
    form = EmailChangeForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        email = form.cleaned_data["email"]
        if email == request.user.email:
            messages.info(request, "That is already the address of your account.")
        elif notification_service.account_email_change(
            user=request.user, email=email, base_url=_site(request), requested_from=client_address(request)
        ):
            sent = LINK_SENT[settings.EMAIL_VERIFICATION].format(email=email)
            messages.success(request, f"The address of your account is now {email}. {sent}")
        elif settings.EMAIL_VERIFICATION != "none" and not notification_selectors.email_is_confirmed(user=request.user):
            messages.warning(request, f"The address of your account is now {email}. " + NOT_SENT.format(email=email))
        else:
            messages.success(request, f"The address of your account is now {email}.")
        return redirect("account")
    context = {
        "form": form,
        "confirmed": notification_selectors.email_is_confirmed(user=request.user),
        "verification": settings.EMAIL_VERIFICATION,
        "days": settings.EMAIL_VERIFICATION_MAX_AGE.days,
    }
    return render(request, "registration/account.html", context)


@login_required
@require_POST
def email_confirmation_resend(request: HttpRequest) -> HttpResponse:
    user = request.user
    if notification_selectors.email_is_confirmed(user=user):
        messages.info(request, f"{user.email} is confirmed already.")
    elif not user.email:
        messages.info(request, "Add an e-mail address first.")
    elif notification_service.email_confirmation_send(
        user=user, base_url=_site(request), requested_from=client_address(request)
    ):
        messages.success(request, f"A new link is on its way to {user.email}. Links sent earlier still work.")
    else:
        messages.warning(request, NOT_SENT.format(email=user.email))
    return redirect("account")


def email_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows what the link confirms and a button; POST confirms. (A link scanner that opens
    every link of an e-mail confirms nothing.)"""
    try:
        if request.method == "POST":
            confirmed = notification_service.email_confirm(token=token)
        else:
            claim = notification_selectors.email_confirmation_claim(token=token)
    except ValidationError as error:
        return render(request, "registration/email_confirm.html", {"problem": " ".join(error.messages)}, status=400)
    if request.method == "POST":
        messages.success(request, f"Thank you: {confirmed.email} is confirmed.")
        return redirect("account" if request.user.is_authenticated else "login")
    context = {"claim": claim, "confirmed": notification_selectors.email_is_confirmed(user=claim.user)}
    return render(request, "registration/email_confirm.html", context)
