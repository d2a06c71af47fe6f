#!/usr/bin/env bash
# The README's main job: one ADR training run on LunarLander with results in runs/<name>/.
# Extra arguments go to adr-train (see `adr-train --help`), e.g. scripts/train.sh --budget 100000 --seed 1
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUN_DIR=${ADR_RUN_DIR:-$ROOT/runs/lunar_lander_adr_$(date +%Y%m%d-%H%M%S)}
exec adr-train --config "$ROOT/src/adr_core/adr_core/config/experiments/lunar_lander_adr.yaml" --out "$RUN_DIR" "$@"
