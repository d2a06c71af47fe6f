"""The policy runner loads Ergo actors, weights only, and refuses anything else with a one-line reason."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from adr_core.agents.networks import Actor
from adr_core.base.checkpoint import save_checkpoint
from adr_core.randomization import load_space
from adr_deploy.policy_runner.errors import DeployError
from adr_deploy.policy_runner.loading import load_deployable

REACHER, PUSHER = "adr/ErgoReacher-v0", "adr/ErgoPusher-v0"


def write_checkpoint(path: Path, env_id: str = REACHER, obs_dim: int = 10, act_dim: int = 4,
                     max_episode_steps: int | None = None, seed: int = 0) -> Path:
    """A checkpoint file as the trainer writes it (only the keys a policy needs; real torch.save, real format)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        actor = Actor(obs_dim, act_dim, (16, 16))
    payload = {"env_id": env_id, "space": load_space(env_id).to_dict(), "obs_dim": obs_dim, "act_dim": act_dim,
               "iteration": 3, "agent_steps": 600, "config": {"max_episode_steps": max_episode_steps},
               "agent": {"actor": actor.state_dict()}}
    return save_checkpoint(path, payload)


def test_a_reacher_run_directory_loads(tmp_path: Path) -> None:
    write_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt")
    deployable = load_deployable(tmp_path / "run")
    assert deployable.task.env_id == REACHER and deployable.episode_steps == 100
    assert deployable.path == (tmp_path / "run" / "checkpoints" / "latest.pt").resolve()
    assert deployable.policy(torch.zeros(10).numpy()).shape == (4,)


def test_a_pusher_graph_run_loads_through_its_manifest(tmp_path: Path) -> None:
    checkpoints = tmp_path / "run" / "checkpoints"
    write_checkpoint(checkpoints / "agent-4.pt", PUSHER, obs_dim=17, max_episode_steps=50)
    (checkpoints / "latest.json").write_text('{"iteration": 4, "files": {"agent": "agent-4.pt"}}')
    deployable = load_deployable(tmp_path / "run")
    assert deployable.task.env_id == PUSHER and deployable.task.needs_puck
    assert deployable.episode_steps == 50  # the training run's own episode length


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "nothing_here", "no run directory or checkpoint"),
    (lambda d: _bytes(d / "garbage.pt", b"not a checkpoint at all"), "is corrupt or not an adr_core checkpoint"),
    (lambda d: _truncated(d / "truncated.pt"), "is corrupt or not an adr_core checkpoint"),
    (lambda d: write_checkpoint(d / "lunar.pt", "adr/LunarLander-v0", obs_dim=8, act_dim=2),
     "a policy of 'adr/LunarLander-v0' cannot run on the Ergo Jr"),
    (lambda d: write_checkpoint(d / "pusher_with_reacher_actor.pt", PUSHER, obs_dim=10),
     "the actor maps 10 -> 4 values but adr/ErgoPusher-v0 has 17 observations"),
    (lambda d: _sampler_only(d / "sampler.pt"), "holds no agent policy"),
])
def test_unusable_checkpoints_are_refused_with_a_reason(tmp_path: Path, make, message: str) -> None:
    with pytest.raises(DeployError, match=message):
        load_deployable(make(tmp_path))


def test_an_empty_checkpoint_parameter_is_refused() -> None:
    with pytest.raises(DeployError, match="no checkpoint given"):
        load_deployable("")


def _bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _truncated(path: Path) -> Path:
    write_checkpoint(path)
    path.write_bytes(path.read_bytes()[:200])
    return path


def _sampler_only(path: Path) -> Path:
    return save_checkpoint(path, {"env_id": REACHER, "sampler": {"positions": torch.zeros(3)}})


# exported policies (adr-export): ONNX through onnxruntime, without torch ------------------------------------------


def exported(tmp_path: Path, fmt: str = "onnx", env_id: str = REACHER, obs_dim: int = 10) -> Path:
    from adr_core.export import export_policy

    write_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt", env_id, obs_dim=obs_dim)
    return export_policy(tmp_path / "run", fmt, tmp_path / f"export_{fmt}").parent


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_an_export_acts_like_the_checkpoint_it_came_from(tmp_path: Path, fmt: str) -> None:
    from adr_core.evaluation import load_policy
    from adr_core.export import check_inputs

    folder = exported(tmp_path, fmt)
    deployable, original = load_deployable(folder), load_deployable(tmp_path / "run")
    assert deployable.kind == fmt and deployable.task.env_id == REACHER and deployable.episode_steps == 100
    observations = check_inputs(load_policy(tmp_path / "run"), episodes=2, seed=3)
    difference = abs(deployable.policy(observations) - original.policy(observations)).max()
    assert difference <= 1e-5
    assert deployable.policy(observations[0]).shape == (4,)


def test_the_onnx_path_never_imports_torch(tmp_path: Path) -> None:
    import subprocess
    import sys

    folder = exported(tmp_path)
    script = ("import sys; sys.modules['torch'] = None\n"  # any `import torch` now fails
              "import numpy as np\n"
              "from adr_deploy.policy_runner.loading import load_deployable\n"
              f"d = load_deployable({str(folder)!r})\n"
              "a = d.policy(np.zeros(10, dtype=np.float32))\n"
              "assert a.shape == (4,) and d.kind == 'onnx'\n"
              "print('torch-free', sorted(m for m in sys.modules if m.startswith('torch')))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "torch-free ['torch']" in result.stdout  # only the blocking entry: nothing imported torch


@pytest.mark.parametrize("spoil, message", [
    (lambda folder: (folder / "policy.onnx").write_bytes((folder / "policy.onnx").read_bytes() + b"x"),
     "does not match the SHA-256"),
    (lambda folder: _edit_spec(folder, env_id="adr/LunarLander-v0"), "cannot run on the Ergo Jr"),
    (lambda folder: _edit_spec(folder, act_dim=3), "needs 10 -> 4 in [-1, 1]"),
    (lambda folder: (folder / "policy_spec.json").unlink(), "holds an exported program but no policy_spec.json"),
])
def test_an_export_that_does_not_fit_the_arm_is_refused_before_any_command(tmp_path: Path, spoil, message) -> None:
    folder = exported(tmp_path)
    spoil(folder)
    with pytest.raises(DeployError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        load_deployable(folder)


def _edit_spec(folder: Path, **changes) -> None:
    import json

    spec = json.loads((folder / "policy_spec.json").read_text())
    (folder / "policy_spec.json").write_text(json.dumps({**spec, **changes}))
