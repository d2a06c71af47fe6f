"""Typed configuration, the in-process ADR trainer (Algorithm 1), checkpoints, run logs and the ``adr-train`` CLI.

Kept import-light on purpose: ``from adr_core.training.trainer import Trainer`` etc.
"""
