"""Moved to ``adr_core.base.checkpoint`` (the bottom layer); this name stays an alias of that module, so that
existing imports keep working."""
import sys

from ..base import checkpoint as _moved

sys.modules[__name__] = _moved
