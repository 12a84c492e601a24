"""The demo's pages that the browser tests visit, by who may see them, and logging in as one of
the demo's users in a new browser context."""

from __future__ import annotations

from leaderboard.management.commands.load_demo import DEMO_PASSWORD, ROOT_SLUG, SLUG, SUBTASK_B_SLUG

EVALUATION = f"/tasks/{SLUG}/phases/evaluation"
PUBLIC_PAGES = [
    "/",
    f"/tasks/{ROOT_SLUG}/",
    f"/tasks/{SLUG}/",
    f"/tasks/{SUBTASK_B_SLUG}/phases/evaluation/leaderboard/",
    f"{EVALUATION}/leaderboard/",
    f"{EVALUATION}/leaderboard/?calibrated=1&sort=kappa_c",
    f"/tasks/{SLUG}/phases/development/leaderboard/",
    f"{EVALUATION}/metrics/macro_recall/",
    f"{EVALUATION}/metrics/recall[neutral]_c/",
    f"{EVALUATION}/disagreements/",
    f"{EVALUATION}/disagreements/?set=all",
    f"{EVALUATION}/what-if/?target=0.5,0.3,0.2&metric=accuracy",
    f"{EVALUATION}/analysis/",
    f"/tasks/{SUBTASK_B_SLUG}/phases/evaluation/analysis/",
    "/references/",
    "/accounts/login/",
    "/accounts/signup/",
    "/accounts/password/reset/",
]
MEMBER_PAGES = [
    f"/tasks/{ROOT_SLUG}/",
    f"/tasks/{SUBTASK_B_SLUG}/",
    f"/tasks/{SLUG}/",
    f"/tasks/{SLUG}/team/",
    f"{EVALUATION}/leaderboard/",
    f"{EVALUATION}/analysis/",
    "/accounts/",
    "/accounts/notifications/",
    "/accounts/api-tokens/",
    "/accounts/password/change/",
]
"""Pages as Team A's member sees them (its evaluation submission's page is added by the tests)."""
ORGANISER_PAGES = [
    f"/tasks/{SLUG}/",
    f"/tasks/{SLUG}/edit/",
    f"/tasks/{SLUG}/phases/new/",
    f"/tasks/{SLUG}/phases/evaluation/edit/",
    f"/tasks/{SLUG}/phases/evaluation/files/",
    f"/tasks/{SLUG}/phases/evaluation/gold/",
    f"/tasks/{SLUG}/submissions/",
    f"/tasks/{SLUG}/registrations/",
    f"/tasks/{SLUG}/announcements/",
    f"/tasks/{SLUG}/phases/evaluation/runs/",
    f"{EVALUATION}/analysis/",
    f"/tasks/{SLUG}/archive/",
    "/tasks/new/",
    "/tasks/new/?subtasks=1",
    f"/tasks/{ROOT_SLUG}/",
    f"/tasks/{ROOT_SLUG}/subtasks/new/",
    f"/tasks/{ROOT_SLUG}/edit/",
    "/tasks/import/",
    "/accounts/",
    "/accounts/api-tokens/",
]


def new_page(chromium, base_url: str, username: str | None = None, **context_options):
    """A new browser context and its page, logged in as ``username`` when given."""
    context = chromium.new_context(**context_options)
    page = context.new_page()
    if username:
        page.goto(base_url + "/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", DEMO_PASSWORD)
        with page.expect_navigation():
            page.click("main button[type=submit]")
    return context, page
