"""Experiment drivers: the paper's reproduction grid (``python -m experiments.reproduce``), its claim rules
(``repro_claims``) and stable-baselines3 with uniform domain randomization (``sb3_uniform_dr``, used by
benchmarks/vs_sb3.py). Run them from the repository root with ``python -m experiments.<name>``."""
