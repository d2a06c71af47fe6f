# The two commands of the README, plus helpers. Every target runs the idempotent set-up first
# (a no-op in ~0.1 s when nothing changed).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
ENV := source scripts/env.sh
# Extra arguments, e.g. make train ARGS="--budget 50000"   make test ARGS="-k svpg"
ARGS ?=

.PHONY: setup train test test-core test-integration clean help

help:
	@echo "make train   - set up (first time) and run the main job: an ADR training run with results"
	@echo "make test    - set up (first time) and run the whole test suite"
	@echo "make setup   - only the set-up: .venv with pinned packages + colcon build of ros2_ws/"
	@echo "make clean   - remove ros2_ws build products (keeps .venv)"

setup:
	@bash scripts/setup.sh

train: setup
	@$(ENV) && bash scripts/train.sh $(ARGS)

test: setup
	@$(ENV) && python -m pytest $(ARGS)

test-core: setup
	@$(ENV) && python -m pytest tests/core $(ARGS)

test-integration: setup
	@$(ENV) && python -m pytest tests/integration $(ARGS)

clean:
	rm -rf ros2_ws/build ros2_ws/install ros2_ws/log
