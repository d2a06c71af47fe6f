"""Decides the zero-shot transfer claim from deployed episodes by the paired rule fixed before the runs
(results/pushers/rules.md, section 3): ADR against UDR policies trained at the same seeds, per arm or puck setting.

    python -m experiments.transfer_claims runs/transfer_pusher --out runs/transfer_pusher/report

Reads the layout ``experiments/standin_transfer.py`` writes (``<root>/<setting>/<method>_seed<k>.jsonl``, via
``adr_deploy.transfer_report.load``). Per policy and setting: the mean final distance over its episodes and its
solved share; an aborted episode has no final distance: it is left out of the mean, counted as unsolved, and the
number of aborted episodes is printed beside the decision (the rule counts it at its distance when aborted, which
the runner does not record: a decision with aborted episodes says so).

Rule, per setting, over the seeds both methods were deployed at (``n >= 2`` pairs, else "inconclusive"): the paired
differences d = UDR - ADR of the per-policy mean final distance (lower is better, so d > 0 favours ADR);
one-sided paired t-test (scipy.stats.ttest_rel): p(ADR better) < 0.05 -> "ADR transfers better"; p(UDR better) <
0.05 -> "UDR transfers better"; otherwise "no difference shown" (not "equal": 5 pairs detect only effects of about
one paired standard deviation). The paper's claim (its Fig. 9b: ADR ahead under the puck settings outside the
training ranges) is reproduced when every setting named by ``--claim-settings`` says "ADR transfers better".
Writes ``transfer_claims.md`` and ``transfer_claims.json`` in ``--out``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from adr_core.cli_types import ArgumentParser
from adr_deploy.transfer_report import Episode, TransferError, load

ALPHA = 0.05
ADR_BETTER, UDR_BETTER, NO_DIFFERENCE, INCONCLUSIVE = (
    "ADR transfers better", "UDR transfers better", "no difference shown", "inconclusive")


@dataclass(frozen=True)
class SettingDecision:
    setting: str
    seeds: list[int]  # the pairs: seeds deployed with both methods
    adr_mean_distance: list[float]  # per policy, in the order of seeds
    udr_mean_distance: list[float]
    adr_solved: list[float]
    udr_solved: list[float]
    mean_difference: float  # UDR - ADR, metres (> 0: ADR closer)
    p_adr_better: float
    p_udr_better: float
    aborted: int
    decision: str


def _per_policy(episodes: Sequence[Episode]) -> tuple[float, float]:
    distances = [e.final_distance for e in episodes if not math.isnan(e.final_distance)]
    return (float(np.mean(distances)) if distances else math.nan,
            float(np.mean([e.success for e in episodes])) if episodes else math.nan)


def decide_setting(setting: str, episodes: Sequence[Episode]) -> SettingDecision:
    by_policy: dict[tuple[str, int], list[Episode]] = {}
    for e in episodes:
        if e.setting == setting:
            by_policy.setdefault((e.method, e.seed), []).append(e)
    seeds = sorted({s for m, s in by_policy if m == "ADR"} & {s for m, s in by_policy if m == "UDR"})
    adr = [_per_policy(by_policy[("ADR", s)]) for s in seeds]
    udr = [_per_policy(by_policy[("UDR", s)]) for s in seeds]
    aborted = sum(bool(e.aborted) for s in seeds for m in ("ADR", "UDR") for e in by_policy[(m, s)])
    a = np.array([x[0] for x in adr])
    u = np.array([x[0] for x in udr])
    usable = ~(np.isnan(a) | np.isnan(u))
    a, u = a[usable], u[usable]
    difference = float(np.mean(u - a)) if a.size else math.nan
    if a.size < 2:
        p_adr, p_udr, decision = math.nan, math.nan, INCONCLUSIVE
    else:
        if np.allclose(u - a, (u - a)[0]):  # no spread: the t statistic is undefined
            p_adr = 0.0 if difference > 0 else 1.0
            p_udr = 0.0 if difference < 0 else 1.0
        else:
            p_adr = float(stats.ttest_rel(u, a, alternative="greater").pvalue)  # UDR's distance larger
            p_udr = float(stats.ttest_rel(u, a, alternative="less").pvalue)
        decision = ADR_BETTER if p_adr < ALPHA else UDR_BETTER if p_udr < ALPHA else NO_DIFFERENCE
    return SettingDecision(setting, seeds, [x[0] for x in adr], [x[0] for x in udr], [x[1] for x in adr],
                           [x[1] for x in udr], difference, p_adr, p_udr, aborted, decision)


def claim_verdict(decisions: Sequence[SettingDecision], claim_settings: Sequence[str]) -> str:
    named = {d.setting: d for d in decisions}
    missing = [s for s in claim_settings if s not in named]
    if missing:
        return f"inconclusive (no episodes at {', '.join(missing)})"
    if all(named[s].decision == ADR_BETTER for s in claim_settings):
        return "reproduced"
    if any(named[s].decision == INCONCLUSIVE for s in claim_settings):
        return "inconclusive"
    return "not reproduced"


def _fmt(values: Sequence[float], digits: int = 4) -> str:
    return ", ".join("–" if math.isnan(v) else f"{v:.{digits}f}" for v in values)


def markdown(decisions: Sequence[SettingDecision], claim_settings: Sequence[str], root: Path) -> str:
    lines = ["# Zero-shot transfer: ADR against UDR, paired by seed", "",
             f"Episodes from `{root}`. Rule (experiments/transfer_claims.py; for the ErgoPusher figure fixed "
             "before its runs in results/pushers/rules.md, section 3): per setting, "
             "the paired differences UDR - ADR of each policy's mean final distance; one-sided paired t-test, "
             f"p < {ALPHA} decides; otherwise no difference shown.", "",
             "| setting | seeds (pairs) | ADR mean final distance per policy [m] | UDR | ADR solved per policy | "
             "UDR solved | mean UDR - ADR [m] | p (ADR better) | p (UDR better) | aborted | decision |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for d in decisions:
        lines.append(f"| {d.setting} | {', '.join(map(str, d.seeds))} ({len(d.seeds)}) | {_fmt(d.adr_mean_distance)} | "
                     f"{_fmt(d.udr_mean_distance)} | {_fmt(d.adr_solved, 2)} | {_fmt(d.udr_solved, 2)} | "
                     f"{d.mean_difference:+.4f} | {d.p_adr_better:.3f} | {d.p_udr_better:.3f} | {d.aborted} | "
                     f"**{d.decision}** |")
    lines += ["", f"The paper's claim (ADR ahead at {', '.join(claim_settings)}): "
                  f"**{claim_verdict(decisions, claim_settings)}**.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0],
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", help="the folder standin_transfer wrote (<setting>/<method>_seed<k>.jsonl)")
    parser.add_argument("--out", help="where transfer_claims.md/.json go (default: <root>/report)")
    parser.add_argument("--claim-settings", nargs="+", default=["slippery", "rough"],
                        help="the settings where the paper's claim says ADR transfers better (default: the "
                             "ErgoPusher puck's slippery rough; ErgoReacher: weak_torque)")
    args = parser.parse_args(argv)
    root = Path(args.root)
    try:
        episodes = load(root)
    except TransferError as error:
        print(f"transfer_claims: {error}", file=sys.stderr)
        return 2
    settings = list(dict.fromkeys(e.setting for e in episodes))
    decisions = [decide_setting(s, episodes) for s in settings]
    out = Path(args.out) if args.out else root / "report"
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(decisions, args.claim_settings, root)
    (out / "transfer_claims.md").write_text(text)
    (out / "transfer_claims.json").write_text(json.dumps(
        {"claim_settings": args.claim_settings, "verdict": claim_verdict(decisions, args.claim_settings),
         "settings": [asdict(d) for d in decisions]}, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
