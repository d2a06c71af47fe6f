"""The one exception type of the randomization API."""
from __future__ import annotations


class RandomizationError(ValueError):
    """Bad randomization input. The message names the dimension and the allowed range."""
