"""Speed benchmarks (``make bench`` runs the main ones): each prints a Markdown table and measures its ratios against a
baseline in the same run. Run them from the repository root with ``python -m benchmarks.<name>``; docs/benchmarks.md
has the current results and their commands. Experiment drivers (grids, searches, time to land) are in experiments/."""
