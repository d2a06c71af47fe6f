"""Run from the repository root: python results/pushing_transfer/exploration/contact.py
How often does an untrained SAC actor's exploration move the puck? white (iid) vs pink (1/f) noise, per space."""
import sys, numpy as np
from adr_core.envs import make_env

def pink(rng, steps, dims, beta=1.0):
    f = np.fft.rfftfreq(steps); f[0] = f[1]
    spec = (rng.standard_normal((dims, len(f))) + 1j * rng.standard_normal((dims, len(f)))) * f ** (-beta / 2)
    x = np.fft.irfft(spec, n=steps, axis=1).T
    return x / x.std(axis=0, keepdims=True)

def run(space, kind, episodes=100, seed=0):
    env = make_env("adr/ErgoPusher-v0", **({} if space is None else {"space": space}))
    rng = np.random.default_rng(seed)
    moved, disp, better = 0, [], 0
    for e in range(episodes):
        env.reset(seed=20000 + e); u = env.unwrapped
        p0 = u.puck_position.copy(); d0 = np.linalg.norm(p0 - u.goal_position)
        if kind == "white":
            noise = rng.standard_normal((100, 4))
        elif kind.startswith("beta"):
            noise = pink(rng, 100, 4, float(kind[4:]))
        else:  # hold: a random target held for k steps
            k = int(kind[4:]); noise = np.repeat(rng.standard_normal((100 // k + 1, 4)), k, axis=0)[:100]
        for t in range(100):
            _, _, _, _, info = env.step(np.tanh(noise[t]))
        d = np.linalg.norm(u.puck_position - p0); disp.append(d)
        moved += d > 0.01; better += info["final_distance"] < d0 - 0.01
    env.close()
    return moved, better, float(np.mean(disp))

for space in (None, "ErgoPusher-v0-standin", "results/identify/reference_speed4/identified.yaml"):
    for kind in ("white", "beta1", "beta1.5", "beta2", "hold10", "hold25", "hold50"):
        m, b, d = run(space, kind)
        print(f"{space or 'plain'} {kind}: puck moved >1cm in {m}/100, closer to goal by >1cm in {b}/100, mean displacement {d:.3f} m", flush=True)
