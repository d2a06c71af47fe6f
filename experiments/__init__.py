"""Experiment drivers (the lab's instruments, not the product): the paper's reproduction grid
(``python -m experiments.reproduce``) and its claim rules (``repro_claims``), the preset search (``preset_search``),
where the sampler looks (``probe_focus``), time to land/solve (``time_to_land`` with ``sb3_zoo_lander`` and
``sb3_robot``), DDPG/TD3 parity with stable-baselines3 (``parity``), the stand-in transfer (``standin_transfer``),
SB3 + ADR vs SB3 + UDR (``sb3_adr_vs_udr``), samplers side by side by the paired rule of issue 32
(``sampler_compare``). The long-running ones share ``runner`` (worker pool, one JSON line per
finished job, ``--report-only``). Run them from the repository root with ``python -m experiments.<name>``; the
speed benchmarks are in ``benchmarks/`` (``make bench``)."""
