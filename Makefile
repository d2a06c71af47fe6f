# The two commands of the README, plus helpers. Every target runs the idempotent set-up first
# (a no-op in ~0.1 s when nothing changed).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
ENV := source scripts/env.sh
# Extra arguments, e.g. make train ARGS="budget:=50000"   make test ARGS="-k svpg"
ARGS ?=
# make test runs the suite on this many pytest-xdist workers, a test file per worker at a time (0: in one process)
TEST_WORKERS ?= 2

.PHONY: setup train test lint test-core test-integration clean help bench-setup bench deploy-setup check-pip

help:
	@echo "make train   - set up (first time) and run the main job: an ADR training run with results"
	@echo "make test    - set up (first time) and run the whole test suite"
	@echo "make lint    - ruff (lint, import order) over the repository and mypy over every package (strict on adr_core)"
	@echo "make check-pip - the pip-only install of adr_core in a fresh venv without ROS (a short SB3 run, resume)"
	@echo "make setup   - only the set-up: .venv with pinned packages + colcon build of ros2_ws/"
	@echo "make deploy-setup - the arm's computer only: driver + ONNX policy runner, no torch (.venv-deploy)"
	@echo "make clean   - remove ros2_ws build products (keeps .venv)"
	@echo "make bench-setup - add the benchmark-only packages (stable-baselines3) to .venv"
	@echo "make bench   - the speed benchmarks of docs/benchmarks.md (long: run on an idle machine)"

setup:
	@bash scripts/setup.sh

train: setup
	@$(ENV) && bash scripts/train.sh $(ARGS)

test: setup
	@$(ENV) && python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=25 $(ARGS)

lint: setup
	@$(ENV) && ruff check . && mypy

check-pip:
	@bash scripts/check_pip_install.sh

test-core: setup
	@$(ENV) && python -m pytest tests/core $(ARGS)

test-integration: setup
	@$(ENV) && python -m pytest tests/integration $(ARGS)

deploy-setup:
	@bash scripts/setup.sh --deploy

clean:
	rm -rf ros2_ws/build ros2_ws/install ros2_ws/build-deploy ros2_ws/install-deploy ros2_ws/log

bench-setup: setup
	@$(ENV) && pip install -q -r requirements/benchmarks.txt -c requirements/constraints.txt

# Every speed benchmark of docs/benchmarks.md in turn; Markdown tables on stdout, JSON under runs/bench/. About an
# hour on 2 idle cores (the reproduction grid is separate: experiments/reproduce.py, docs/reproduction.md).
bench: bench-setup
	@$(ENV) && mkdir -p runs/bench && \
		python -m benchmarks.learner --threads 1 2 --json runs/bench/learner.json && \
		python -m benchmarks.threads --json runs/bench/threads.json && \
		python -m benchmarks.scaling --json runs/bench/scaling.json && \
		python -m benchmarks.memory --in-process --json runs/bench/memory.json && \
		python -m benchmarks.vs_sb3 --instances 1 2 4 --json runs/bench/vs_sb3.json && \
		python -m benchmarks.graph --json runs/bench/graph.json
