#!/usr/bin/env bash
# The README's main job: an ADR training run on LunarLander as the ROS 2 node graph (sampler, one simulator
# instance, discriminator, trainer as separate processes over DDS) with the fast agent preset
# (lunar_lander_adr_fast: small SAC, ends once it lands, confirmed on fresh episodes; 4 of 5 held-out seeds do,
# docs/benchmarks.md "Time to land"), then the evaluation report of that run. The last line
# printed says how the final policy does at the reference engine and across the main-engine range.
#
#   scripts/train.sh                                    # 2 cores: 2-16 min of training as a graph, then the report
#   scripts/train.sh seed:=1 method:=udr                # any train_sim.launch.py argument (adr_launch ... --show-args)
#   scripts/train.sh config:=ergo_reacher_adr_fast           # a robot policy: the config sets env and sampler
#   scripts/train.sh config:=lunar_lander_adr budget:=1000000   # the paper's DDPG protocol (~8 h on 2 cores)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONFIG=lunar_lander_adr_fast
RUN_DIR=""
METHOD=""
for arg in "$@"; do
    [[ $arg == config:=* ]] && CONFIG=${arg#config:=}
    [[ $arg == run_dir:=* ]] && RUN_DIR=${arg#run_dir:=}
    [[ $arg == method:=* ]] && METHOD=_${arg#method:=}
done
if [[ -z $RUN_DIR ]]; then  # runs/<config name><_method if given>_<time>
    NAME=$(basename "${CONFIG%.yaml}")
    RUN_DIR=$ROOT/runs/${NAME}${METHOD}_$(date +%Y%m%d-%H%M%S)
fi
args=("config:=lunar_lander_adr_fast" "instances:=1" "run_dir:=$RUN_DIR")
args+=("$@")  # later assignments win, so user arguments override the defaults above
echo "[train] run directory: $RUN_DIR"
adr_launch adr train_sim.launch.py "${args[@]}"
echo "[train] evaluating the trained policy and writing the report"
adr-report "$RUN_DIR" --out "$RUN_DIR/report"
echo "[train] done: $RUN_DIR/report/summary.md (figures beside it), TensorBoard: tensorboard --logdir $RUN_DIR/tb"
sed 's/^/[train] final policy: /' "$RUN_DIR/report/outcome.txt"
