"""What signing costs per message (issue 47, adr_ros/signing.py): sign and verify of the graph's messages at the
sizes a run sends, next to what the message costs anyway (rclpy's CDR serialization, which every publish does).

    python -m benchmarks.signing                 # the default sizes, ~1 s per measurement
    python -m benchmarks.signing --seconds 0.3 --json signing.json

Messages: a full 1000-step LunarLander trajectory (8 observations, 2 actions) and a 100-step ErgoPusher one (17, 3),
the policy weights of the fast presets' 256-256 actor (LunarLander) and 128-128 actor (ErgoPusher), one iteration's
particle rewards (10 particles) and one proposal (``ParameterSet``). Each row: microseconds per sign, per verify
(a fresh signature each time: replays are dropped), per serialization, and (sign + verify) / serialization.
"""
from __future__ import annotations

import argparse
import copy
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch


def _time_per_call(call: Callable[[], object], seconds: float) -> float:
    """Microseconds per call (the best of three chunks of ``seconds`` / 3)."""
    best = float("inf")
    for _ in range(3):
        n, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds / 3:
            call()
            n += 1
        best = min(best, (time.perf_counter() - started) / n)
    return best * 1e6


def messages() -> dict[str, object]:
    from adr_core.agents.networks import Actor
    from adr_core.rollout import Trajectory
    from adr_interfaces.msg import ParameterSet, ParticleRewards
    from adr_ros import policy_weights, trajectories
    from adr_ros.arrays import to_field

    rng = np.random.default_rng(0)

    def trajectory(length: int, obs: int, act: int):  # noqa: ANN202
        made = Trajectory(obs=rng.normal(size=(length, obs)).astype(np.float32),
                          actions=rng.uniform(-1, 1, (length, act)).astype(np.float32),
                          next_obs=rng.normal(size=(length, obs)).astype(np.float32),
                          rewards=rng.normal(size=length).astype(np.float32),
                          terminated=np.arange(length) == length - 1,
                          params=np.ones(3), params_normalized=np.full(3, 0.5), kind="randomized", iteration=7, slot=3,
                          policy_version=12, episode_return=1.0, length=length)
        return trajectories.to_msg(made, env_id="adr/Env-v0", names=["a", "b", "c"], instance_id="adr_sim_0",
                                   run_id="bench-run")

    def weights(obs: int, act: int, hidden: tuple[int, int]):  # noqa: ANN202
        actor = Actor(obs, act, hidden, gaussian=True)
        return policy_weights.to_msg(actor.state_dict(), version=5, algorithm="sac", obs_dim=obs, act_dim=act,
                                     run_id="bench-run")

    return {
        "trajectory LunarLander 1000 steps": trajectory(1000, 8, 2),
        "trajectory ErgoPusher 100 steps": trajectory(100, 17, 3),
        "policy weights 256-256 (LunarLander)": weights(8, 2, (256, 256)),
        "policy weights 128-128 (ErgoPusher)": weights(17, 3, (128, 128)),
        "particle rewards (10)": ParticleRewards(run_id="bench-run", iteration=7, slots=list(range(10)),
                                                 rewards=to_field(rng.normal(size=10), np.float64)),
        "proposal (ParameterSet)": ParameterSet(run_id="bench-run", env_id="adr/Env-v0", iteration=7, slot=3,
                                                names=["a", "b", "c"], values=[1.0, 2.0, 3.0],
                                                normalized=[0.1, 0.2, 0.3]),
    }


def measure(seconds: float) -> list[dict]:
    from rclpy.serialization import serialize_message

    from adr_ros.signing import RunSigning

    key = bytes(range(32))
    sender = RunSigning(key, "bench-run", "/bench_sender", lambda _line: None)
    receiver = RunSigning(key, "bench-run", "/bench_receiver", lambda _line: None)
    rows = []
    for name, message in messages().items():
        size = len(serialize_message(message))
        sign_us = _time_per_call(lambda m=message: sender.sign(m), seconds)
        signed = [sender.sign(copy.deepcopy(message)) for _ in range(200)]  # fresh sequences: none is a replay
        position = {"i": 0}

        def verify(batch: list = signed, at: dict = position) -> None:
            if at["i"] == len(batch):  # a new receiver: the sequences start over
                receiver.verifier._last.clear()
                at["i"] = 0
            assert receiver.accept(batch[at["i"]], "bench")
            at["i"] += 1

        verify_us = _time_per_call(verify, seconds)
        serialize_us = _time_per_call(lambda m=message: serialize_message(m), seconds)
        rows.append({"message": name, "bytes": size, "sign_us": round(sign_us, 1), "verify_us": round(verify_us, 1),
                     "serialize_us": round(serialize_us, 1),
                     "sign_verify_vs_serialize": round((sign_us + verify_us) / serialize_us, 2)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.signing", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement (default 1 s)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = measure(args.seconds)
    print("| message | CDR bytes | sign µs | verify µs | serialize µs | (sign + verify) / serialize |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['message']} | {row['bytes']} | {row['sign_us']} | {row['verify_us']} | {row['serialize_us']} | "
              f"{row['sign_verify_vs_serialize']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
