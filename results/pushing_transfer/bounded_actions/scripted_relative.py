"""Does a bounded action (a step from the measured angle, or from the last command) let the scripted pusher cope with
the identified stiff servos?  Same 30 start states and space as results/pushing_transfer/diagnosis.md.
Usage: python results/pushing_transfer/bounded_actions/scripted_relative.py MODE STEP OUT.csv (from the repository root, PYTHONPATH=.)   (MODE: absolute | measured | command; STEP rad per control step)
"""
import sys
import numpy as np
from experiments.pusher_diagnosis import ErgoPusherScript, episode_rows, run_policy, write
from adr_core.envs.ergo_pusher import ACTION_SCALE

mode, step, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
space = "results/identify/reference_speed4/identified.yaml"
holder = {}

def final(env, obs):
    script = holder.setdefault("script", ErgoPusherScript(env))
    script.env = env.unwrapped
    script.reset()
    state = {"last": None}

    def policy(o):
        q_goal = script.act() * ACTION_SCALE
        if mode == "absolute":
            q = q_goal
        else:
            base = o[:4] * ACTION_SCALE if mode == "measured" else (state["last"] if state["last"] is not None else o[:4] * ACTION_SCALE)
            q = base + np.clip(q_goal - base, -step, step)
        q = np.clip(q, -ACTION_SCALE, ACTION_SCALE)
        state["last"] = q
        return q / ACTION_SCALE
    return run_policy(policy)(env, obs)

rows = episode_rows("adr/ErgoPusher-v0", range(10000, 10030), final, space)
write(rows, __import__("pathlib").Path(out))
d = np.array([r["final_distance"] for r in rows])
print(f"{mode} {step}: solved {(d < 0.025).sum()}/30 mean {d.mean():.3f} median {np.median(d):.3f}")
