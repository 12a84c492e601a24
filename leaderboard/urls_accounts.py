"""Sign-up, log-in (throttled by django-axes, see leaderboard.throttling) and log-out."""

from django.contrib.auth import views as auth_views
from django.urls import path

from leaderboard.views import accounts

urlpatterns = [
    path("signup/", accounts.signup, name="signup"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
