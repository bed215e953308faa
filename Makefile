# The two commands a newcomer needs: `make run` and `make test`. See README.md.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/registry
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15

.PHONY: run test test-faults install install-dev services browser migrate worker beat lint check bench clean

# Two stamps: `make run` installs the runtime only (requirements.txt, what the image carries);
# `make test`, `check` and `bench` add the development tools (requirements-dev.txt). Both files
# are complete locks, installed with --no-deps (see the head of requirements.txt).
$(STAMP): requirements.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) is needed (set PYTHON=... to use another 3.11 interpreter)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet --no-deps -r requirements.txt
	touch $(STAMP)

$(DEV_STAMP): $(STAMP) requirements-dev.txt
	$(PIP) install --quiet --no-deps -r requirements-dev.txt
	touch $(DEV_STAMP)

install: $(STAMP)

install-dev: $(DEV_STAMP)

## run: the registry on http://127.0.0.1:8000 with nothing configured (SQLite, in-process tasks, demo agents)
run: $(STAMP)
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL DJANGO_DEBUG=true $(PY) manage.py migrate --noinput
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL DJANGO_DEBUG=true $(PY) manage.py load_demo
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL DJANGO_DEBUG=true $(PY) -m uvicorn registry.asgi:application --host 127.0.0.1 --port 8000

services:
	bash scripts/services.sh

browser:
	bash scripts/browser.sh

## test: set up everything, check style, types and layers, run the suite on PostgreSQL and Redis.
## Never stops, restarts or reconfigures the machine's services: tests marked `disruptive`
## (tests/faults/) are left to `make test-faults`.
test: $(DEV_STAMP) services browser check
	env -u DATABASE_URL -u REDIS_URL DJANGO_SECRET_KEY=test-only-secret $(PY) manage.py makemigrations --check --dry-run
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) DJANGO_SECRET_KEY=test-only-secret \
	  CELERY_TASK_ALWAYS_EAGER=true $(PY) -m pytest -m "not disruptive" $(PYTEST_ARGS)

## test-faults: the fault tests (tests/faults/): each starts its own PostgreSQL cluster and Redis
## on free ports, then stops and kills them under live servers and workers. The machine's
## PostgreSQL and Redis are not used (the test process itself runs on SQLite).
test-faults: $(DEV_STAMP)
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL DJANGO_SECRET_KEY=test-only-secret \
	  $(PY) -m pytest -m disruptive tests/faults $(PYTEST_ARGS)

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
