"""stable-baselines3 SAC trained with Active Domain Randomization on adr/LunarLander-v0, through the ADR loop API.

    make bench-setup                       # stable-baselines3 into .venv (optional dependency)
    source scripts/env.sh
    python examples/sb3_sac_adr.py --steps 100000 --out runs/sb3_sac_adr

Nothing here is specific to SAC: any SB3 algorithm takes the wrapped env and the callback. The loop's state
(particles, discriminator) is saved beside the model and SB3's replay buffer; ``--resume`` continues all three (the
loop with the same next proposals as an uninterrupted run).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import torch
from stable_baselines3 import SAC

from adr_core import ADRLoop, ADRWrapper
from adr_core.envs import make_env
from adr_core.integrations.sb3 import ADRCallback
from adr_core.samplers import sampler_kinds
from adr_core.training.config import TrainConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--sampler", default="adr", choices=sampler_kinds())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    loop = ADRLoop.from_config(TrainConfig(env_id="adr/LunarLander-v0", sampler=args.sampler, seed=args.seed))
    env = ADRWrapper(make_env("adr/LunarLander-v0"), loop)
    if args.resume:
        model = SAC.load(args.out / "model.zip", env=env)
        model.load_replay_buffer(args.out / "replay_buffer.pkl")  # SB3 saves the model without it
        loop.load(args.out / "adr_loop.pt")
    else:
        model = SAC("MlpPolicy", env, policy_kwargs={"net_arch": [64, 64]}, seed=args.seed, verbose=0)
    callback = ADRCallback(loop, verbose=1)
    model.learn(args.steps, callback=callback, reset_num_timesteps=not args.resume)
    args.out.mkdir(parents=True, exist_ok=True)
    model.save(args.out / "model.zip")
    model.save_replay_buffer(args.out / "replay_buffer.pkl")
    loop.save(args.out / "adr_loop.pt")
    print(f"{callback.updates} ADR iterations; model and loop state in {args.out}")


if __name__ == "__main__":
    main()
