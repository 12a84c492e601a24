"""Sign-up, log-in (rate-limited) and log-out."""

from django.contrib.auth import views as auth_views
from django.urls import path

from leaderboard.views import accounts

urlpatterns = [
    path("signup/", accounts.signup, name="signup"),
    path("login/", accounts.RateLimitedLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
