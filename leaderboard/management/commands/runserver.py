"""``python manage.py runserver``: Django's (with its static files), on the embedded set-up's
server, which sends a download of unknown length in chunks so that one that fails half way is
seen to fail (:mod:`leaderboard.embedded_server`)."""

from django.contrib.staticfiles.management.commands import runserver

from leaderboard.embedded_server import EmbeddedServer


class Command(runserver.Command):
    server_cls = EmbeddedServer
