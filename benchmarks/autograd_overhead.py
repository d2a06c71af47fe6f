"""How much of a twin-critic gradient step is autograd's bookkeeping: the same step with a hand-written backward.

    python -m benchmarks.autograd_overhead                       # LunarLander's and ErgoReacher's critic sizes
    python -m benchmarks.autograd_overhead --cells 10:64:256 --json out.json

Each cell ``IN:HIDDEN:BATCH`` is one critic step of a 2-member ensemble (``EnsembleCritic``'s layout: batched matrix
products, two hidden ReLU layers of HIDDEN units, inputs of IN = obs + act dims) on a fixed synthetic batch: forward,
the summed mean-squared losses against fixed targets, the gradients, one fused Adam step. ``autograd`` takes the
gradients with ``torch.autograd.grad``; ``manual`` computes the same gradients with explicit matrix products (checked
against autograd's before timing, to float32 rounding). The two alternate in chunks in one process, so a busy machine
slows them alike; each one's time per step is the best of ``--repeats`` chunks, on one thread.

What it says is a bound for a learner without autograd (a hand-written SAC step would also need the actor's
gradient through the critics and the squashed Gaussian's terms); the agents use autograd.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import torch

MEMBERS = 2


def parse_cell(text: str) -> tuple[int, int, int]:
    try:
        dims, hidden, batch = (int(part) for part in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a cell is IN:HIDDEN:BATCH (e.g. 10:64:256), got {text!r}") from None
    if min(dims, hidden, batch) < 1:
        raise argparse.ArgumentTypeError(f"every part of a cell must be at least 1, got {text!r}")
    return dims, hidden, batch


class CriticStep:
    """A 2-member, 2-hidden-layer ensemble critic and its Adam state, stepped either way on one fixed batch."""

    def __init__(self, dims: int, hidden: int, batch: int, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        sizes = [dims, hidden, hidden, 1]
        self.weights = [(torch.rand(MEMBERS, a, b, generator=g) * 2 - 1) / math.sqrt(a)
                        for a, b in zip(sizes[:-1], sizes[1:])]
        self.biases = [torch.zeros(MEMBERS, 1, b) for b in sizes[1:]]
        self.params = [*self.weights, *self.biases]
        self.x = torch.randn(batch, dims, generator=g).expand(MEMBERS, batch, dims)
        self.y = torch.randn(MEMBERS, batch, 1, generator=g)
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self.steps = [torch.zeros(()) for _ in self.params]

    def _adam(self, grads: list[torch.Tensor]) -> None:
        torch._foreach_add_(self.steps, 1)  # the kernel takes the step count after this step (as torch.optim.Adam)
        torch._fused_adam_(self.params, grads, self.exp_avg, self.exp_avg_sq, [], self.steps, lr=1e-3, beta1=0.9,
                           beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)

    def autograd_grads(self) -> list[torch.Tensor]:
        params = [p.detach().requires_grad_() for p in self.params]
        weights, biases = params[:3], params[3:]
        h = self.x
        for i, (w, b) in enumerate(zip(weights, biases)):
            h = torch.baddbmm(b, h, w)
            if i < 2:
                h = torch.relu(h)
        loss = ((h - self.y) ** 2).mean() * MEMBERS
        return list(torch.autograd.grad(loss, params))

    def manual_grads(self) -> list[torch.Tensor]:
        w, b, x = self.weights, self.biases, self.x
        a1 = torch.baddbmm(b[0], x, w[0])
        h1 = a1.clamp_min(0)
        a2 = torch.baddbmm(b[1], h1, w[1])
        h2 = a2.clamp_min(0)
        q = torch.baddbmm(b[2], h2, w[2])
        g3 = (q - self.y).mul_(2.0 * MEMBERS / q.numel())
        g2 = torch.bmm(g3, w[2].transpose(1, 2)).mul_(a2 > 0)
        g1 = torch.bmm(g2, w[1].transpose(1, 2)).mul_(a1 > 0)
        return [torch.bmm(x.transpose(1, 2), g1), torch.bmm(h1.transpose(1, 2), g2), torch.bmm(h2.transpose(1, 2), g3),
                g1.sum(1, keepdim=True), g2.sum(1, keepdim=True), g3.sum(1, keepdim=True)]

    def autograd_step(self) -> None:
        self._adam(self.autograd_grads())

    def manual_step(self) -> None:
        with torch.no_grad():
            self._adam(self.manual_grads())


def best_per_step(steps: dict[str, Callable[[], None]], chunk: int, repeats: int) -> dict[str, float]:
    best = {name: math.inf for name in steps}
    for step in steps.values():  # warm-up
        for _ in range(chunk // 4 + 1):
            step()
    for _ in range(repeats):
        for name, step in steps.items():
            started = time.perf_counter()
            for _ in range(chunk):
                step()
            best[name] = min(best[name], (time.perf_counter() - started) / chunk)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.autograd_overhead",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", nargs="+", type=parse_cell, default=[(10, 64, 256), (14, 128, 128)],
                        metavar="IN:HIDDEN:BATCH",
                        help="critic sizes [10:64:256 (LunarLander's preset) 14:128:128 (ErgoReacher's)]")
    parser.add_argument("--chunk", type=int, default=500, help="steps per timed chunk [500]")
    parser.add_argument("--repeats", type=int, default=5, help="chunks per way [5]")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    for dims, hidden, batch in args.cells:
        check = CriticStep(dims, hidden, batch)
        for auto, manual in zip(check.autograd_grads(), check.manual_grads()):
            if not torch.allclose(auto, manual, rtol=1e-4, atol=1e-6):
                raise SystemExit(f"cell {dims}:{hidden}:{batch}: the hand-written gradients differ from autograd's")
        critic = CriticStep(dims, hidden, batch)
        best = best_per_step({"autograd": critic.autograd_step, "manual": critic.manual_step}, args.chunk,
                             args.repeats)
        row = {"cell": f"{dims}:{hidden}:{batch}", "autograd_ms": round(best["autograd"] * 1e3, 4),
               "manual_ms": round(best["manual"] * 1e3, 4),
               "manual_vs_autograd": round(best["manual"] / best["autograd"], 3)}
        print(f"critic {row['cell']}: autograd {row['autograd_ms']:.3f} ms, manual {row['manual_ms']:.3f} ms per "
              f"step ({row['manual_vs_autograd']:.2f}x)", flush=True)
        rows.append(row)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"torch": torch.__version__, "threads": 1, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
