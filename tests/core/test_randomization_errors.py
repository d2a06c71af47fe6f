"""Bad input raises RandomizationError naming the dimension and the allowed range; nothing is clipped."""
from __future__ import annotations

import numpy as np
import pytest

from adr_core.randomization import RandomizationError, RandomizationSpace, load_space


@pytest.fixture(scope="module")
def lunar() -> RandomizationSpace:
    return load_space("adr/LunarLander-v0")


@pytest.fixture(scope="module")
def pusher() -> RandomizationSpace:
    return load_space("adr/Pusher3DOF-v0")


def test_error_is_a_value_error():
    assert issubclass(RandomizationError, ValueError)


@pytest.mark.parametrize("value", [7.99, 20.5, float("nan"), float("inf"), -float("inf")])
def test_out_of_range_or_non_finite_names_dimension_and_range(lunar, value):
    with pytest.raises(RandomizationError, match=r"main_engine_power=.*allowed range \[8, 20\]"):
        lunar.validate([value])


def test_second_dimension_is_the_one_named(pusher):
    with pytest.raises(RandomizationError, match=r"puck_damping=0\.03 .*\[0\.0125, 0\.025\]"):
        pusher.validate([0.008, 0.03])


def test_batch_error_names_row(pusher):
    with pytest.raises(RandomizationError, match=r"puck_frictionloss=0\.002 \(row 1\)"):
        pusher.validate([[0.008, 0.02], [0.002, 0.02]])


@pytest.mark.parametrize("values", [[], [0.008], [0.008, 0.02, 0.02], [[0.008]], np.zeros((2, 2, 2))])
def test_wrong_count(pusher, values):
    with pytest.raises(
        RandomizationError, match=r"expected 2 values in the order \['puck_frictionloss', 'puck_damping'\]"
    ):
        pusher.validate(values)


def test_unknown_and_missing_names(pusher):
    with pytest.raises(RandomizationError, match=r"unknown dimension\(s\) \['mass'\]"):
        pusher.validate({"puck_frictionloss": 0.008, "puck_damping": 0.02, "mass": 1.0})
    with pytest.raises(RandomizationError, match=r"missing value\(s\) for \['puck_damping'\]"):
        pusher.validate({"puck_frictionloss": 0.008})


def test_non_numeric(pusher):
    with pytest.raises(RandomizationError, match="puck_damping"):
        pusher.validate({"puck_frictionloss": 0.008, "puck_damping": "soft"})


def test_normalized_input_errors(lunar):
    with pytest.raises(RandomizationError, match=r"normalized main_engine_power=nan"):
        lunar.from_normalized([np.nan])
    with pytest.raises(RandomizationError, match=r"main_engine_power=21.2 \(normalized 1.1\).*\[8, 20\]"):
        lunar.from_normalized([1.1])
    with pytest.raises(RandomizationError, match=r"expected 1 normalized values"):
        lunar.from_normalized([0.5, 0.5])


def test_edges_are_accepted_and_not_clipped(lunar):
    np.testing.assert_array_equal(lunar.validate([8.0]), [8.0])
    np.testing.assert_array_equal(lunar.validate([20.0]), [20.0])
    with pytest.raises(RandomizationError):
        lunar.validate([20.0 + 1e-6])


def test_unknown_range_and_space(lunar):
    with pytest.raises(RandomizationError, match=r"unknown range 'extreme'; known ranges: \['hard', 'test', 'train'\]"):
        lunar.range_box("extreme")
    with pytest.raises(RandomizationError, match="no packaged randomization space for 'adr/Nope-v0'"):
        load_space("adr/Nope-v0")


def test_bad_sample_count(lunar):
    with pytest.raises(RandomizationError, match="sample count"):
        lunar.sample_uniform(np.random.default_rng(0), -1)


@pytest.mark.parametrize(
    "dimension, message",
    [
        ({"name": "a", "default": 1.0, "train": {"multiplier": [2.0, 1.0]}}, "low <= high"),
        ({"name": "a", "default": 1.0, "train": {"percent": [1, 2]}}, "range must be"),
        ({"name": "a", "default": 1.0}, "needs name, default, train"),
        (
            {"name": "a", "default": 1.0, "train": {"absolute": [0, 2]}, "limits": {"absolute": [0.5, 2]}},
            "outside its limits",
        ),
    ],
)
def test_bad_yaml_data(dimension, message):
    with pytest.raises(RandomizationError, match=message):
        RandomizationSpace.from_dict({"env_id": "x", "dimensions": [dimension]})


def test_range_with_unknown_dimension():
    data = {
        "env_id": "x",
        "dimensions": [{"name": "a", "default": 1.0, "train": "default"}],
        "ranges": {"hard": {"b": "default"}},
    }
    with pytest.raises(RandomizationError, match=r"range 'hard' names unknown dimensions \['b'\]"):
        RandomizationSpace.from_dict(data)
