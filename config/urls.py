"""Top-level URLs: the product, the JSON API, accounts and the admin."""

from django.contrib import admin
from django.urls import include, path, re_path

from leaderboard.api.endpoints import api, api_not_found

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("leaderboard.urls_accounts")),
    path("api/", api.urls),
    re_path(r"^api/(?P<rest>.*)$", api_not_found),  # any other address under /api/: a JSON 404
    path("", include("leaderboard.urls")),
]
