import sys, yaml, copy
src = yaml.safe_load(open("results/identify/reference_speed4/identified.yaml"))
groups = {
  "full": [],
  "no_tracker": ["puck_latency", "puck_period", "puck_noise"],
  "default_servo": [d["name"] for d in src["dimensions"] if d["name"].endswith(("_gain", "_max_torque"))],
  "no_latency_backlash": ["action_latency"] + [d["name"] for d in src["dimensions"] if d["name"].endswith("_backlash")],
  "default_torque": [d["name"] for d in src["dimensions"] if d["name"].endswith("_max_torque")],
  "default_gain": [d["name"] for d in src["dimensions"] if d["name"].endswith("_gain")],
}
for name, drop in groups.items():
    s = copy.deepcopy(src)
    s["dimensions"] = [d for d in s["dimensions"] if d["name"] not in drop]
    for r in s["ranges"].values():
        for k in drop: r.pop(k, None)
    s["description"] = f"diagnosis {name}: identified at 4 rad/s without {drop}"
    yaml.safe_dump(s, open(f"{name}.yaml", "w"), sort_keys=False)
    print(name, len(s["dimensions"]))
