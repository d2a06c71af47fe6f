"""Reports over runs (ROS-free; docs/evaluation.md): what a run directory holds (``run_data``), the evaluations a
report needs (``evaluations``), learning curves, sampling statistics, the paper's figures (``plots/``) and the
one-page summary (``build_report``, ``adr-report``). Above ``adr_core.evaluation``, which plays policies."""
