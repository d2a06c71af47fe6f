"""Typed configuration, the hooks a config asks for, the in-process ADR trainer (Algorithm 1: it holds the engine of
``adr_core.engine``), its checkpoints and the ``adr-train`` CLI.

Kept import-light on purpose: ``from adr_core.training.trainer import Trainer`` etc.
"""
