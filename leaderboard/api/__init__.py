"""The JSON API under ``/api/`` (django-ninja): tasks, leaderboards, rank correlations,
uploads and their scores, described by the OpenAPI schema it serves (``/api/openapi.json``,
browsable at ``/api/docs`` with the Swagger UI that django-ninja ships, no CDN).

It is a third shell beside the pages and the exports: every answer comes from the same
selectors (visibility from :mod:`leaderboard.permissions`, feedback from
:mod:`leaderboard.selectors.feedback`) and every upload goes through the same service, so
the API cannot show what a page would not. Modules: ``problems`` (errors as JSON),
``throttling`` (counting requests in the cache), ``tokens`` (creating, revoking and checking
API tokens), ``auth`` (who is asking), ``schemas`` (the shapes of the answers), ``endpoints``.
"""
