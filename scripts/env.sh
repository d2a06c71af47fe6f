# Source this file (bash) to run the ADR stack from the project venv and ros2_ws/install:
#   source scripts/env.sh
# It sets what ROS 2 from PyPI needs (AMENT_PREFIX_PATH, HOME, the built workspace) and safe defaults
# for discovery: localhost only and domain id 42, both overridable before sourcing.
# ADR_PROFILE=deploy selects the deploy-only install (scripts/setup.sh --deploy: .venv-deploy, ros2_ws/install-deploy).
ADR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ ${ADR_PROFILE:-} == deploy ]]; then
    ADR_VENV=${ADR_VENV:-$ADR_ROOT/.venv-deploy}
    _install=$ADR_ROOT/ros2_ws/install-deploy
else
    ADR_VENV=${ADR_VENV:-$ADR_ROOT/.venv}
    _install=$ADR_ROOT/ros2_ws/install
fi
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE
export HOME=${HOME:-$ADR_ROOT/.home}
export VIRTUAL_ENV=$ADR_VENV
export PATH=$ADR_VENV/bin:$PATH
export AMENT_PREFIX_PATH=$ADR_VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}
export RMW_IMPLEMENTATION=${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-42}
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
if [[ -f $_install/setup.bash ]]; then
    # shellcheck disable=SC1091
    source "$_install/setup.bash"
else
    echo "scripts/env.sh: $_install is missing; run scripts/setup.sh${ADR_PROFILE:+ --$ADR_PROFILE} first" >&2
fi
# The user-facing commands (adr_launch, adr_monitor, adr-train, adr-report, adr_viewer, ...) on PATH, as
# `ros2 run` would find them.
for _pkg in adr adr_core adr_deploy adr_viewer poppy_driver poppy_standin; do
    if [[ -d $_install/$_pkg ]]; then export PATH=$_install/$_pkg/lib/$_pkg:$PATH; fi
done
unset _pkg _install
