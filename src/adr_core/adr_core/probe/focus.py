"""The focus rule, fixed before any probe was run.

``share`` = fraction of an iteration's proposals inside the failure region; the focus ratio of a window of iterations
= its mean share / the region's uniform share (its volume in the normalized cube). The sampler's focus holds when the
ratio over the second half of the iterations is >= 2 and so is the ratio over the last quarter (it has not drifted
away by the end).
"""
from __future__ import annotations

from typing import Any

import numpy as np

FOCUS_RATIO = 2.0


def focus_statistics(shares: list[float], uniform_share: float) -> dict[str, Any]:
    n = len(shares)
    shares_array = np.asarray(shares, dtype=np.float64)

    def window(a: int, b: int) -> float:
        return float(shares_array[a:b].mean()) if b > a else float("nan")

    out: dict[str, Any] = {"iterations": n, "uniform_share": uniform_share,
                           "share_whole": window(0, n), "share_first_half": window(0, n // 2),
                           "share_second_half": window(n // 2, n), "share_last_quarter": window(3 * n // 4, n)}
    for key in ("whole", "first_half", "second_half", "last_quarter"):
        out[f"ratio_{key}"] = out[f"share_{key}"] / uniform_share if uniform_share > 0 else float("nan")
    out["focus_held"] = bool(out["ratio_second_half"] >= FOCUS_RATIO and out["ratio_last_quarter"] >= FOCUS_RATIO)
    return out
