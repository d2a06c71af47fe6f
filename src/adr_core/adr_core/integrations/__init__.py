"""Adapters to learning frameworks (optional dependencies: each module imports its framework itself)."""
