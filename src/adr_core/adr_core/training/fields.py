"""Moved to ``adr_core.base.fields`` (the bottom layer); this name stays an alias of that module, so that
existing imports keep working."""
import sys

from ..base import fields as _moved

sys.modules[__name__] = _moved
