# The two commands: `make run` (the whole system on loopback) and `make test`; `make check` is the inner loop.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export SAM_CLI_TELEMETRY := 0
export PATH := $(CURDIR)/.tools/bin:$(HOME)/.local/bin:$(PATH)

UV ?= uv
SAM := $(HOME)/.local/bin/sam
# Three workers on two cores: with two, a quarter of the CPU waited on the stacks' I/O (a run used
# 156-161% of the two cores); a third worker fills it (docs/testing.md, "Profiles and time").
PYTEST_WORKERS ?= 3
CHECK_BASE ?= main
# make check CHECK_REACH=every: every test file that reaches a changed module, not only the nearest
CHECK_REACH ?=
# Every tier in parallel; a file stays on one worker (its module-scoped stack and state), the
# end-to-end files share one local stack a worker (tests/e2e/conftest.py). docs/testing.md.
PYTEST_ALL = $(UV) run pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=30

FN ?=
EVENT ?=

.PHONY: help install run invoke test tiers check deep lint format template build unit contract e2e fuzz mutate openapi bench eval capacity clean vendor browser screenshots

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

install: ## uv, the locked dev environment (its bytecode and the project's compiled once), the SAM CLI
	@command -v $(UV) >/dev/null 2>&1 || { echo "installing uv into .tools/bin ..."; ./.ci/bootstrap-uv >/dev/null; }
	@test -d .venv || echo "installing the locked environment into .venv (the first time takes a few minutes) ..."
	@$(UV) sync --locked --quiet --compile-bytecode
	@# the project's own modules too: with PYTHONDONTWRITEBYTECODE set, each process (a Lambda
	@# environment, a knowledge-admin call) compiled them again; an edited file's stale .pyc is
	@# seen by its timestamp and compiled again in memory (docs/testing.md)
	@$(UV) run python -m compileall -q -j 0 layers/common/knowledge_service functions devstack local_engine kb >/dev/null
	@test -x $(SAM) || { echo "installing the SAM CLI ..."; $(UV) tool install --quiet aws-sam-cli; }

run: install ## start the local stack: moto, the API on :3000, schedules, the FORAGER simulator
	$(UV) run python -m devstack

invoke: ## one function on one event against the running stack: make invoke FN=ReadsFunction EVENT=events/reads_search.json
	@test -n "$(FN)" -a -n "$(EVENT)" || { echo "usage: make invoke FN=<FunctionLogicalId> EVENT=events/<file>.json"; exit 2; }
	@$(UV) run python -m devstack invoke "$(FN)" "$(EVENT)"

test: install browser ## lint, template checks and every test tier (Hypothesis profile ci), the browser tier included
	@# lint and the template checks are each mostly one process, and the tests leave a third of the
	@# two cores idle waiting on their stacks: all three side by side (each one's output kept whole)
	$(MAKE) --no-print-directory -j3 --output-sync=target lint template tiers

tiers: ## every test tier alone (what make test runs beside lint and the template checks)
	$(PYTEST_ALL)

check: install lint ## the inner loop: lint, and the test files nearest to what changed since main (tests/changed.py)
	@files="$$($(UV) run python -m tests.changed $(if $(filter every,$(CHECK_REACH)),--every) $(CHECK_BASE))" || exit 1; \
	if [ -z "$$files" ]; then echo "no test file touches what changed since $(CHECK_BASE)"; exit 0; fi; \
	if echo "$$files" | grep -q '^tests/browser/'; then echo "the browser tier is picked: making sure chromium and axe-core are here"; $(MAKE) --no-print-directory browser; fi; \
	echo "$$files" | xargs $(UV) run pytest -q -n $(PYTEST_WORKERS) --dist loadfile

deep: install ## every tier with the large counts: Hypothesis profile deep, the long fuzz run, 10 kill -9 rounds
	FUZZ_EXAMPLES=50 FUZZ_MAX_SECONDS=1200 DEVSTACK_KILL_ROUNDS=10 $(PYTEST_ALL) --hypothesis-profile=deep

lint: ## ruff, mypy and the import contract (import-linter)
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run mypy layers/common/knowledge_service functions devstack local_engine kb benchmarks
	$(UV) run lint-imports --no-cache

format: ## ruff's fixes and formatting
	$(UV) run ruff check --fix .
	$(UV) run ruff format .

template: ## cfn-lint, sam validate --lint, sam build, and the built functions import
	$(UV) run cfn-lint template.yaml
	$(SAM) validate --lint --region us-east-1
	$(MAKE) --no-print-directory build
	$(UV) run python -m devstack.check_build .aws-sam/build

build: ## sam build (the layer and every function)
	$(SAM) build --build-dir .aws-sam/build --cache-dir .aws-sam/cache --cached --parallel >/dev/null

unit: install ## unit tests only
	$(UV) run pytest -q tests/unit

contract: install ## the FORAGER client against the simulator
	$(UV) run pytest -q tests/contract

e2e: install ## end to end, over HTTP, against the local stack
	$(UV) run pytest -q tests/e2e

capacity: install ## the capacity model: replay the mix on a local stack, print where it breaks, write it into docs/architecture.md
	$(UV) run python -m benchmarks.capacity --write

openapi: install ## write docs/openapi.json from the code (CI fails when it drifts)
	$(UV) run python -m knowledge_service.edge.openapi > docs/openapi.json

mutate: install ## a mutation round on one module and the tests that reach it (outside make test): make mutate MODULE=kb/hub.py [TESTS="tests/unit/test_kb_retries.py"] [SAMPLE=40]
	@test -n "$(MODULE)" || { echo "usage: make mutate MODULE=<a module's file> [TESTS=<test files>] [SAMPLE=<n>]"; exit 2; }
	$(UV) run python -m tests.mutate "$(MODULE)" $(if $(TESTS),--tests $(TESTS)) $(if $(SAMPLE),--sample $(SAMPLE))

fuzz: install ## the long schemathesis run alone: 50 examples, fuzzing until 1,200 s are spent (CI runs one pass of 5)
	FUZZ_EXAMPLES=50 FUZZ_PHASES=examples,coverage,fuzzing FUZZ_MAX_SECONDS=1200 $(UV) run pytest -q tests/e2e/test_fuzz.py

bench: install ## benchmarks: import times, DynamoDB requests per route (writes bench-results.json)
	$(UV) run python -m benchmarks

# make eval EVAL_ARGS="--set flask --systems engine,bm25s --json eval-results.json"
EVAL_ARGS ?=

eval: install ## the scored evaluation: retrieval against FTS5 and bm25s, people and disagreements' precision (docs/evaluation.md)
	$(UV) run python -m benchmarks.eval $(EVAL_ARGS)

vendor: install ## the console's browser code from the npm registry, pinned and checked by console.lock.json
	$(UV) run python -m tests.browser.vendoring

CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

browser: install ## what the browser tier needs: Debian's chromium (apt-get when missing) and axe-core (docs/console.md)
	@test -x $(CHROMIUM) || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium chromium-driver; }
	@# the README's walks pipe curl into jq, and the tests run them as pasted
	@command -v jq >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq jq; }
	@$(UV) run python -m tests.browser.vendoring --check >/dev/null 2>&1 || $(UV) run python -m tests.browser.vendoring --only axe-core

screenshots: install browser ## docs/console/*.png from the browser tier (light and dark, every screen)
	CONSOLE_SCREENSHOTS=docs/console $(UV) run pytest -q -n 0 tests/browser

clean: ## remove build output and caches (not the local stack's data in .devstack/)
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache .hypothesis bench-results.json
