"""Randomization spaces: named physical dimensions, their ranges, and the [0, 1]^d normalized view."""
from .dimension import Dimension
from .errors import RandomizationError
from .loading import available_spaces, load_space, packaged_space_path, space_of
from .space import TRAIN, RandomizationSpace

__all__ = [
    "TRAIN",
    "Dimension",
    "RandomizationError",
    "RandomizationSpace",
    "available_spaces",
    "load_space",
    "space_of",
    "packaged_space_path",
]
