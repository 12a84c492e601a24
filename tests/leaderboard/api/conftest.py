"""A task with two teams (A and B, each with a scored submission) and the roles of the API
tests: anonymous, a member of A, a member of B, the task's organiser, staff. Every role has an
API token."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pytest
from django.test import Client
from django.utils import timezone

from leaderboard.models import Phase, Submission, Task
from leaderboard.services.teams import team_create
from leaderboard.services.tokens import token_create
from tests.conftest import MOSTLY_A, PERFECT

ROLES = ("anonymous", "member", "other", "organiser", "staff")


@dataclass
class World:
    task: Task
    users: dict
    submission_a: Submission
    submission_b: Submission
    secrets: dict = field(default_factory=dict)

    def client(self, role: str, *, token: bool = True) -> Client:
        """A client for ``role``: with its API token (``token``), else logged in by session."""
        if self.users[role] is None:
            return Client()
        if token:
            return Client(HTTP_AUTHORIZATION=f"Bearer {self.secrets[role]}")
        client = Client()
        client.force_login(self.users[role])
        return client

    @property
    def phase(self) -> Phase:
        """The task's only phase."""
        return self.task.current_phase()

    def enter(self, phase: str) -> None:
        """``hidden``: as set up (results hidden until the close); ``public``: the task closed."""
        if phase == "public":
            now = timezone.now()
            Phase.objects.filter(task=self.task).update(
                opens_at=now - dt.timedelta(days=3), closes_at=now - dt.timedelta(minutes=1)
            )
        assert self.phase.results_public() == (phase == "public")


@pytest.fixture
def make_world(make_task, make_user, organiser, submit):
    def make(*, feedback: str = Phase.Feedback.FULL, visibility: str = Phase.Visibility.AFTER_CLOSE) -> World:
        task = make_task(visibility=visibility, feedback=feedback)
        users = {"anonymous": None, "organiser": organiser, "staff": make_user("staff", is_staff=True)}
        submissions = []
        for role, name, content in [("member", "A", PERFECT), ("other", "B", MOSTLY_A)]:
            users[role] = make_user(f"member-of-{name}")
            team_create(task=task, user=users[role], name=name)
            submissions.append(submit(task, users[role], content))
        world = World(task, users, *submissions)
        for role, user in users.items():
            if user is not None:
                world.secrets[role] = token_create(user=user, name="tests")[1]
        assert all(s.status == Submission.Status.SCORED for s in submissions)
        return world

    return make


@pytest.fixture
def world(make_world) -> World:
    return make_world()
