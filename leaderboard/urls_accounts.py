"""Accounts: sign-up, log-in (throttled by django-axes, see leaderboard.throttling), log-out,
password reset and change (Django's own views), e-mail confirmation, notifications and API tokens."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import path

from leaderboard.forms import QueuedPasswordResetForm
from leaderboard.views import accounts, notifications, tokens

urlpatterns = [
    path("", accounts.account, name="account"),
    path("signup/", accounts.signup, name="signup"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "password/reset/",
        auth_views.PasswordResetView.as_view(
            form_class=QueuedPasswordResetForm,
            email_template_name="registration/password_reset_email.txt",
            subject_template_name="registration/password_reset_subject.txt",
            extra_context={"timeout_days": settings.PASSWORD_RESET_TIMEOUT // 86400},
        ),
        name="password_reset",
    ),
    path("password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("password/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("password/change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("password/change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("email/confirm/", accounts.email_confirmation_resend, name="email_confirmation_resend"),
    path("email/confirm/<str:token>/", accounts.email_confirm, name="email_confirm"),
    path("notifications/", notifications.notification_list, name="notifications"),
    path("api-tokens/", tokens.api_tokens, name="api_tokens"),
    path("api-tokens/<int:pk>/revoke/", tokens.api_token_revoke, name="api_token_revoke"),
]
