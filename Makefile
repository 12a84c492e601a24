# The two commands of the README: `make demo` and `make test`. Everything else supports them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PG_URL ?= postgres://postgres@127.0.0.1:5432/test

.PHONY: demo test docs install install-dev lint test-sqlite test-postgres services-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# var/ holds the embedded set-up's SQLite file and collected static files.
install: $(BIN)/python
	mkdir -p "$${LEADERBOARD_VAR_DIR:-var}"
	$(BIN)/pip install -q -r requirements.txt
	@$(MAKE) --no-print-directory $(LOOPS)

install-dev: $(BIN)/python
	mkdir -p "$${LEADERBOARD_VAR_DIR:-var}"
	$(BIN)/pip install -q -r requirements-dev.txt
	@$(MAKE) --no-print-directory $(LOOPS)

# The engine's compiled loops, into numba's cache beside scoring/engine/kernels.py, whenever they
# or numba change: the first bootstrap a person runs reads them instead of compiling them.
LOOPS := $(VENV)/.loops-compiled
$(LOOPS): scoring/engine/kernels.py scoring/engine/compiled.py scoring/engine/compile_loops.py requirements.txt
	$(BIN)/python -m scoring.engine.compile_loops >/dev/null
	touch $@

demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0  # hashed, Brotli and gzip copies (once), into var/staticfiles
	DEBUG=false $(BIN)/python manage.py runserver 127.0.0.1:8000

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/python manage.py makemigrations --check --dry-run
	DJANGO_SETTINGS_MODULE=config.settings.prod SECRET_KEY=$$($(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(60))') \
		ALLOWED_HOSTS=leaderboard.example.org $(BIN)/python manage.py check --deploy --fail-level WARNING

# The engine's tests (tests/scoring/engine: the engine never imports Django, which
# tests/test_architecture.py checks) are shared between the two passes so that both take about
# as long: the files test_a* to test_v* run in the other pass, every other file here.
ENGINE_TESTS_ELSEWHERE := tests/scoring/engine/test_[a-v]*
test-sqlite: install-dev
	$(BIN)/python -m pytest --ignore-glob='$(ENGINE_TESTS_ELSEWHERE)'

# Those engine tests, then the suite on PostgreSQL but for what the SQLite pass has run whatever
# the database: the browser tests and the walk of the demo (pages in Chromium, every link over
# HTTP: what a person gets), the embedded set-up's own processes, and the rest of tests/scoring.
# PostgreSQL's part is skipped with a message where no server answers, except on CI (CI=true),
# where PostgreSQL must be there.
test-postgres: install-dev
	$(BIN)/python -m pytest -p no:cacheprovider $(ENGINE_TESTS_ELSEWHERE).py
	@if $(BIN)/python -c "import psycopg, sys; psycopg.connect('$(PG_URL)', connect_timeout=3).close()" 2>/dev/null; then \
		DATABASE_URL=$(PG_URL) $(BIN)/python -m pytest -p no:cacheprovider -m "not browser and not walk and not embedded" --ignore=tests/scoring; \
	elif [ "$$CI" = "true" ]; then echo "PostgreSQL is not reachable at $(PG_URL), and CI needs it"; exit 1; \
	else echo "SKIPPED: PostgreSQL is not reachable at $(PG_URL); the PostgreSQL pass did not run"; fi

# The manual, strict: a broken link, a stale reference or any other warning fails the build.
# Its reference pages are written from the code on every build (tools/manual.py).
docs: install-dev
	$(BIN)/sphinx-build -W --keep-going -n -E -q -b html docs var/docs
	@echo "The manual: var/docs/index.html"

# The two passes at once, one a core (their databases and processes are their own); each pass's
# output is printed whole when it ends.
test: lint docs
	$(MAKE) --no-print-directory -j2 --output-sync=target test-sqlite test-postgres

# --- the scaled set-up: PostgreSQL, RQ workers on Redis, gunicorn (README: "At scale") ----------
# Each reads its settings from the environment: DATABASE_URL and REDIS_URL for all; `serve`
# also SECRET_KEY (50+ characters) and ALLOWED_HOSTS. Run `manage.py migrate` once first.
SCALE_SETTINGS ?= config.settings.prod

.PHONY: worker serve load faults

worker: install
	DJANGO_SETTINGS_MODULE=$(SCALE_SETTINGS) TASKS_BACKEND=rq \
		$(BIN)/python manage.py scoring_worker default --job-class django_tasks_rq.Job

serve: install
	DJANGO_SETTINGS_MODULE=$(SCALE_SETTINGS) TASKS_BACKEND=rq $(BIN)/python manage.py check --deploy --fail-level ERROR
	DJANGO_SETTINGS_MODULE=$(SCALE_SETTINGS) TASKS_BACKEND=rq $(BIN)/python manage.py collectstatic --noinput
	DJANGO_SETTINGS_MODULE=$(SCALE_SETTINGS) TASKS_BACKEND=rq $(BIN)/gunicorn -c config/gunicorn.py

# The closing-deadline rush on loopback (own database and processes, all ended afterwards).
load: install  # make load LOAD_ARGS="--teams 3000": the options of benchmarks/load_rush.py
	$(BIN)/python benchmarks/load_rush.py $(LOAD_ARGS)

# Faults injected during a rush (Redis stopped, a worker killed or stopped, database connections
# dropped), on loopback with a Redis of its own: what is lost, scored twice, answered 500.
faults: install
	$(BIN)/python benchmarks/faults.py
