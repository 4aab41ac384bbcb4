# The two commands: `make run` (the whole system on loopback) and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export SAM_CLI_TELEMETRY := 0
export PATH := $(CURDIR)/.tools/bin:$(HOME)/.local/bin:$(PATH)

UV ?= uv
SAM := $(HOME)/.local/bin/sam
PYTEST_WORKERS ?= 2

FN ?=
EVENT ?=

.PHONY: help install run invoke test lint format template build unit contract e2e fuzz openapi bench clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

install: ## uv, the locked dev environment, the SAM CLI
	@command -v $(UV) >/dev/null 2>&1 || ./.ci/bootstrap-uv >/dev/null
	@$(UV) sync --locked --quiet
	@test -x $(SAM) || $(UV) tool install --quiet aws-sam-cli

run: install ## start the local stack: moto, the API on :3000, schedules, the FORAGER simulator
	$(UV) run python -m devstack

invoke: ## one function on one event against the running stack: make invoke FN=ReadsFunction EVENT=events/reads_search.json
	@test -n "$(FN)" -a -n "$(EVENT)" || { echo "usage: make invoke FN=<FunctionLogicalId> EVENT=events/<file>.json"; exit 2; }
	@$(UV) run python -m devstack invoke "$(FN)" "$(EVENT)"

test: install lint template ## lint, template checks and every test tier
	$(UV) run pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=15

lint: ## ruff, mypy and the import contract (import-linter)
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run mypy layers/common/knowledge_service functions devstack forager_simulator kb benchmarks
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

openapi: install ## write docs/openapi.json from the code (CI fails when it drifts)
	$(UV) run python -m knowledge_service.edge.openapi > docs/openapi.json

fuzz: install ## a deeper schemathesis run against a fresh local stack (CI runs a bounded one)
	FUZZ_EXAMPLES=50 FUZZ_PHASES=examples,coverage,fuzzing FUZZ_MAX_SECONDS=1200 $(UV) run pytest -q tests/e2e/test_fuzz.py

bench: install ## benchmarks: import times, DynamoDB requests per route (writes bench-results.json)
	$(UV) run python -m benchmarks

clean: ## remove build output and caches (not the local stack's data in .devstack/)
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache .hypothesis bench-results.json
