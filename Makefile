# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEV_STAMP := $(VENV)/.installed-dev-stamp
HOST ?= 127.0.0.1
PORT ?= 8000
# pytest-xdist workers for `make test`: two per core (each has its own test database and
# Redis database), at most 15 (Redis has 16 databases; the first is the default). Nearly
# half of the tests' time is spent waiting (on a spawned server, a lease, the Anki
# stand-in's 25 ms timer): 982 s of test time held 535 s of CPU. With one worker more than
# the cores, two cores stood idle a fifth of the time; with two per core the suite took
# 260 s instead of 280 s on a 2-core machine, and 511 s instead of 646-753 s beside two
# CPU hogs. Idle workers take queued tests from busy ones (`--dist worksteal`): the run's
# tail, a worker still on its last long tests, shrank (280 s against 302 and 304 s with
# tests dealt out once). TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( 2 * n < 15 ? 2 * n : 15 )))

.PHONY: run test lint typecheck pytest worker beat mcp mcp-http superuser migrate bench clean lock catalog conformance

# Set-up output goes to stderr: `make mcp` keeps stdout for JSON-RPC alone. Serving
# needs the project's dependencies only; the test, lint and bench tools (the `dev` extra,
# over half the venv's size and install time) come with the first target that uses them.
# Installs come from the lock files (every version pinned, every file's hash checked) with
# uv: the one on the PATH, else the lock's own uv put into the venv by pip (hash-checked
# too); pip (brought up to date first) where uv cannot be had. The project's dependencies
# are compiled to bytecode as they are installed (a server's first start is not slowed);
# the dev tools compile as they are first used. `make lock` resolves them again from
# pyproject.toml.
# COMPILE_BYTECODE= (empty): the project's dependencies compile as they are first imported
COMPILE_BYTECODE ?= --compile-bytecode
LOCK := .ci/requirements.lock
DEV_LOCK := .ci/requirements-dev.lock
# $(call install,ARGUMENTS,UV_ONLY_ARGUMENTS): `pip install ARGUMENTS` with uv, or with pip
install = uv=$$(command -v uv || echo $(VENV)/bin/uv); \
  if [ -x "$$uv" ]; then "$$uv" pip install --quiet $(2) --python $(PY) $(1); \
  else $(PY) -m pip install --quiet $(1); fi >&2
# uv's lines of the dev lock (its version and hashes) into the venv, by pip
uv_bootstrap = command -v uv >/dev/null || test -x $(VENV)/bin/uv || { \
  awk '/^uv==/ {p = 1} p {print} p && !/\\$$/ {exit}' $(DEV_LOCK) > $(VENV)/uv.requirement \
  && $(PY) -m pip install --quiet --no-deps --require-hashes -r $(VENV)/uv.requirement \
  || $(PY) -m pip install --quiet --upgrade pip; } >&2

$(STAMP): pyproject.toml $(LOCK)
	@echo "setting up $(VENV) (under half a minute the first time)" >&2
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) >&2
	@$(uv_bootstrap)
	@$(call install,--require-hashes -r $(LOCK),$(COMPILE_BYTECODE))
	@$(call install,--no-deps -e .)
	@touch $(STAMP)

$(DEV_STAMP): $(STAMP) $(DEV_LOCK)
	@echo "installing the test, lint and bench tools into $(VENV)" >&2
	@$(call install,--require-hashes -r $(DEV_LOCK))
	@touch $(DEV_STAMP)

## lock: resolve the lock files again (after a change to the dependencies in pyproject.toml)
lock: $(DEV_STAMP)
	$(VENV)/bin/uv pip compile pyproject.toml --universal --python-version 3.11 \
	  --generate-hashes --quiet --custom-compile-command "make lock" -o $(LOCK)
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 \
	  --generate-hashes --quiet --custom-compile-command "make lock" -o $(DEV_LOCK)

## catalog: record the answers given while `runmcp` starts, and docs/tools.md (after a change to a tool)
catalog: $(STAMP)
	$(PY) manage.py runmcp --write-catalog

migrate: $(STAMP)
	$(PY) manage.py migrate --noinput

## run: install, migrate and serve pages, API and MCP (ASGI) on http://$(HOST):$(PORT)
run: migrate
	@echo ""
	@echo "  Home       http://$(HOST):$(PORT)/"
	@echo "  Admin      http://$(HOST):$(PORT)/admin/   (make superuser creates an account)"
	@echo "  API        http://$(HOST):$(PORT)/api/     docs: http://$(HOST):$(PORT)/api/docs/"
	@echo "  MCP (HTTP) http://$(HOST):$(PORT)/mcp      stdio: make mcp"
	@echo "  Health     http://$(HOST):$(PORT)/healthz"
	@echo ""
	SITE_URL=$${SITE_URL:-http://$(HOST):$(PORT)} PYTHONMALLOC=$${PYTHONMALLOC:-malloc} $(PY) manage.py serve --host $(HOST) --port $(PORT)

## test: lint, type-check and run the test suite
test: lint typecheck pytest

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy's cache lives in the user's cache directory, not in the checkout: a fresh clone (as
# CI makes) checks in about 2 s instead of 15. mypy revalidates each module by its content
# hash and its own version, so a cache made by another checkout or commit is safe to reuse.
MYPY_CACHE ?= $(if $(XDG_CACHE_HOME)$(HOME),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tool-hub/mypy,.mypy_cache)

typecheck: $(DEV_STAMP)
	$(VENV)/bin/mypy --cache-dir "$(MYPY_CACHE)" .

# The configured database is migrated first: MCP servers the tests spawn use it, and on
# PostgreSQL `runmcp` refuses to start with migrations pending.
pytest: $(DEV_STAMP)
	$(PY) manage.py migrate --verbosity 0 --no-input
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal

## worker: a Celery worker on REDIS_URL
worker: $(STAMP)
	@test -n "$$REDIS_URL" || { echo "REDIS_URL is not set: without a broker tasks run in-process, no worker is needed." >&2; exit 1; }
	$(PY) -m celery -A config worker --loglevel INFO

## mcp: the MCP server on stdio (what a desktop client launches)
## beat: the periodic tasks (stalled agent runs, queued Anki notes); one per deployment
beat: $(STAMP)
	@test -n "$$REDIS_URL" || { echo "REDIS_URL is not set: there is no broker to schedule on." >&2; exit 1; }
	$(PY) -m celery -A config beat --loglevel INFO --schedule $(VENV)/celerybeat-schedule

# The links the MCP servers give (a run's page, a printable sheet) point at the site `make
# run` serves: the same HOST and PORT, unless SITE_URL says otherwise.
mcp: $(STAMP)
	@SITE_URL=$${SITE_URL:-http://$(HOST):$(PORT)} $(PY) manage.py runmcp

## conformance: the official MCP conformance suite on stateful and stateless HTTP (Node 22
## comes from npm when the system's is older; .ci/conformance-baseline.yaml lists the
## scenarios that need the reference server's own tools)
conformance: $(STAMP)
	$(PY) .ci/conformance.py

## mcp-http: the MCP server alone on streamable HTTP (port 8001)
mcp-http: $(STAMP)
	SITE_URL=$${SITE_URL:-http://$(HOST):$(PORT)} $(PY) manage.py runmcp --transport http

# With DJANGO_SUPERUSER_USERNAME/_PASSWORD/_EMAIL set: no questions (no terminal needed).
superuser: migrate
	@if [ -n "$$DJANGO_SUPERUSER_USERNAME" ]; then \
	  $(PY) manage.py createsuperuser --noinput && echo "superuser $$DJANGO_SUPERUSER_USERNAME created"; \
	else $(PY) manage.py createsuperuser; fi

# Every benchmark, one after another (each prints its tables; docs/benchmarks.md says what each measures).
bench: $(DEV_STAMP)
	$(PY) bench/mcp_overhead.py
	$(PY) bench/ojclient.py
	$(PY) bench/anki.py
	$(PY) bench/problems.py
	$(PY) bench/problems_photo.py
	$(PY) bench/problems_sheets.py
	$(PY) bench/normagpt.py
	$(if $(NORM_DATASET),$(PY) bench/norm_structure.py $(NORM_DATASET),@echo "bench/norm_structure.py: set NORM_DATASET to a checkout of the norms dataset (docs/normagpt.md)")
	$(if $(NORM_DATASET),$(PY) bench/norm_answers.py $(NORM_DATASET),@echo "bench/norm_answers.py: set NORM_DATASET to a checkout of the norms dataset (docs/normagpt.md)")
	$(PY) bench/normagpt_agent.py
	$(PY) bench/scale.py

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .mypy_cache .ruff_cache
