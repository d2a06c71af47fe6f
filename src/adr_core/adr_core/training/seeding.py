"""Moved to ``adr_core.base.seeding`` (the bottom layer); this name stays an alias of that module, so that
existing imports keep working."""
import sys

from ..base import seeding as _moved

sys.modules[__name__] = _moved
