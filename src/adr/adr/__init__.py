"""Bringup: launch files, graph description and the pip-path launcher of the ADR stack."""
