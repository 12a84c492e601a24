"""Page building: what each page shows, assembled from the selectors (rows read from the
database), the engine (rankings, correlations, what-ifs), the charts and the ready HTML of a
board's rows. A view parses its request, calls one function here, and renders the context it
returns.

The costly parts of results pages (a board's rows, a metric's ranking, the disagreement
analysis, a what-if, a shake-up, the downloads) are kept in the results cache
(:mod:`leaderboard.results_cache`) under the task's results version, which every write that
changes them raises: nothing stale is ever served.
"""
