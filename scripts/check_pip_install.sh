#!/usr/bin/env bash
# The pip-only user's install, checked as that user would do it (issue 29): a fresh venv with no ROS, torch pinned
# first, then the core from the source tree with the sb3 and box2d extras; a short ADR + stable-baselines3 run
# (examples/sb3_sac_adr.py) and a resume of it; ROS is not importable; the source tree is left as it was.
# Usage: scripts/check_pip_install.sh   (PYTHON=python3.12 to pick the interpreter; 1-2 minutes, mostly pip)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# a user's shell may have sourced scripts/env.sh: nothing of the project's venv or workspace may leak in
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV AMENT_PREFIX_PATH COLCON_PREFIX_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH
PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PIP=(--quiet --disable-pip-version-check)
log() { printf '[check-pip] %s\n' "$*"; }
quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }  # a local index's note

# what an install could leave behind: untracked or ignored files (build/, *.egg-info) under src/adr_core
written() { (cd "$ROOT" && git status --porcelain --ignored --untracked-files=all -- src/adr_core | grep '^[?!]' || true); }
before=$(written)
log "fresh venv $WORK/venv ($("$PYTHON" --version))"
"$PYTHON" -m venv "$WORK/venv"
PY=$WORK/venv/bin/python
quiet "$PY" -m pip install "${PIP[@]}" torch==2.13.0
log "pip install src/adr_core[sb3,box2d]"
quiet "$PY" -m pip install "${PIP[@]}" "$ROOT/src/adr_core[sb3,box2d]" -c "$ROOT/requirements/constraints.txt"
cd "$WORK"  # nothing from the checkout on sys.path: the installed package only
"$PY" - <<'PY'
import importlib.util
import sys
import gymnasium as gym
import adr_core
assert importlib.util.find_spec("rclpy") is None, "rclpy is importable: this venv is not ROS-free"
assert adr_core.__file__.startswith(sys.prefix), f"adr_core imported from {adr_core.__file__}, not this venv"
env = gym.make("adr/LunarLander-v0")  # registered by `import adr_core`
print(f"[check-pip] adr_core {adr_core.__version__} from {adr_core.__file__}; {env.spec.id} made")
PY
log "examples/sb3_sac_adr.py: 600 steps, then --resume for 600 more"
"$PY" "$ROOT/examples/sb3_sac_adr.py" --steps 600 --out "$WORK/run" > "$WORK/first.log"
"$PY" "$ROOT/examples/sb3_sac_adr.py" --steps 600 --out "$WORK/run" --resume > "$WORK/second.log"
tail -n 2 "$WORK/second.log"
after=$(written)
if [[ "$before" != "$after" ]]; then
    echo "[check-pip] the install wrote into the source tree:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    exit 1
fi
log "ok: installed without ROS, trained and resumed; src/adr_core unchanged"
