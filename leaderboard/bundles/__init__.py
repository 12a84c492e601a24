"""Tasks as bundles: a task exported as one zip with a readable ``task.yaml``, and the
competition bundles of CodaLab (``competition.yaml`` v1.5) and Codabench (version 2), read into
one plan of what an import creates (:mod:`leaderboard.bundles.plan`), which the import service
writes in one transaction (:mod:`leaderboard.services.imports`).

Every bundle is checked as strictly as an upload before anything in it is read
(:mod:`leaderboard.bundles.zips`), and its YAML is read with PyYAML's safe loader
(:mod:`leaderboard.bundles.documents`).
"""
