"""experiments/standin_transfer.py refuses bad input before starting anything (no stand-in, no launch)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from experiments import standin_transfer


def run_dir(tmp_path: Path, env_id: str) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(yaml.safe_dump({"env_id": env_id, "sampler": "adr", "seed": 230}))
    return run


@pytest.mark.parametrize("speed", ["9", "0.01"])
def test_a_moving_speed_outside_the_drivers_bounds_is_refused(tmp_path: Path, speed: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dir(tmp_path, "adr/ErgoPusher-v0")
    with pytest.raises(SystemExit) as exit_:
        standin_transfer.main(["--task", "pusher", "--runs", str(run), "--max-speed", speed, "--out",
                               str(tmp_path / "out")])
    assert exit_.value.code == 2
    assert f"--max-speed {speed}: the driver takes 0.05-7 rad/s" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_reacher_run_is_refused_for_the_pusher_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dir(tmp_path, "adr/ErgoReacher-v0")
    with pytest.raises(SystemExit):
        standin_transfer.main(["--task", "pusher", "--runs", str(run), "--out", str(tmp_path / "out")])
    assert "trained adr/ErgoReacher-v0; --task pusher deploys adr/ErgoPusher-v0 policies" in capsys.readouterr().err


def test_a_pusher_setting_names_the_puck_or_the_arm_and_the_puck() -> None:
    from experiments.standin_transfer import standin_command

    link = Path("/tmp/tty")
    assert standin_command("pusher", "rough", link)[:7] == ["adr-standin-arm", "--task", "pusher", "--puck", "rough",
                                                            "--setting", "reference"]
    assert standin_command("pusher", "weak_torque+slippery", link)[3:7] == ["--puck", "slippery", "--setting",
                                                                           "weak_torque"]
    assert standin_command("reacher", "weak_torque", link)[:3] == ["adr-standin-arm", "--setting", "weak_torque"]


def test_two_runs_of_the_same_method_and_seed_are_refused(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Results files are named <method>_seed<k>: two variants of one search seed would share (and mix) one."""
    runs = []
    for name in ("a", "b"):
        run = tmp_path / name
        run.mkdir()
        (run / "config.yaml").write_text(yaml.safe_dump({"env_id": "adr/ErgoPusher-v0", "sampler": "adr",
                                                         "seed": 0}))
        runs.append(str(run))
    with pytest.raises(SystemExit) as exit_:
        standin_transfer.main(["--task", "pusher", "--runs", *runs, "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2
    assert "are both adr seed 0" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
