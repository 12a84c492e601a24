"""Top-level URLs: the product, accounts and the admin."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("leaderboard.urls_accounts")),
    path("", include("leaderboard.urls")),
]
