#!/bin/bash
# One seed of the Q11 sampler outcome campaign (results/samplers/rules.md, results/campaign.md Q11): its four runs and
# their report, from a frozen worktree, then its scores rows, sweep points and outcome lines merged into this
# repository's results/samplers/outcome/{ll,er}/. Usage (the worktree's environment sourced, from the worktree root):
#   bash <repo>/experiments/outcome_seed.sh ll|er <seed> <repo>
# A finished seed is skipped; a seed cut off resumes from its checkpoints (reproduce resumes runs) on the same CPU model
# only (rules.md "Machines"): on another, remove runs/samplers_outcome_<part>/s<seed> first.
set -euo pipefail
part=$1 seed=$2 repo=$3
case $part in
  ll) env_id=adr/LunarLander-v0 config=lunar_lander_adr_fast short=lunarlander
      evaluation=(--points 13 --eval-episodes 10 --eval-seeds 0 1 2 3 4) ;;
  er) env_id=adr/ErgoReacher-v0 config=ergo_reacher_adr_fast short=ergoreacher
      evaluation=(--points 7 --eval-episodes 4 --eval-seeds 0 1 2 3 4) ;;
  *) echo "outcome_seed.sh: the part is ll or er, got '$part'" >&2; exit 2 ;;
esac
dest=$repo/results/samplers/outcome/$part
if grep -qx "## seed $seed (.*)" "$dest/outcome.txt" 2>/dev/null; then
  echo "seed $seed of $part is already in $dest"; exit 0
fi
out=runs/samplers_outcome_$part/s$seed
nice -n 19 python -m experiments.reproduce --envs "$env_id" --config "$config" --set early_stop_every_steps=0 \
  --methods learnability alp_gmm udr adr --seeds "$seed" --budget 200000 --parallel 1 --threads 1 "${evaluation[@]}" \
  --report-arg=--no-checkpoint-curves --out "$out"
mkdir -p "$dest/sweeps"
python - "$out/report/${short}_scores.csv" "$dest/${short}_scores.csv" "$PWD/" <<'PY'
import csv
import os
import sys

new, kept, worktree = sys.argv[1:4]
rows, fields = {}, None
for path in (kept, new):
    if os.path.exists(path):
        with open(path) as f:
            reader = csv.DictReader(f)
            fields = fields or reader.fieldnames
            for row in reader:
                if row.get("checkpoint"):
                    row["checkpoint"] = row["checkpoint"].replace(worktree, "")  # relative to the worktree
                rows[(row["run"], row["setting"])] = row
with open(kept, "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows[key] for key in sorted(rows))
PY
for sweep in "$out"/report/sweeps/*/; do
  run=$(basename "$sweep")
  mkdir -p "$dest/sweeps/$run"
  cp "$sweep/sweep_points.csv" "$dest/sweeps/$run/"
done
machine=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
{ echo "## seed $seed ($machine, $(date -u +%F))"; cat "$out/report/outcome.txt"; } >> "$dest/outcome.txt"
echo "seed $seed of $part kept in $dest"
