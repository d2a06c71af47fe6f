"""RandomizationSpace: mappings, ranges, sampling, serialization (no simulator involved)."""
from __future__ import annotations

import numpy as np
import pytest

from adr_core.randomization import Dimension, RandomizationSpace, load_space


def make_space() -> RandomizationSpace:
    dims = [
        Dimension("power", 13.0, 8.0, 20.0, "N"),
        Dimension("friction", 0.01, 0.0067, 0.01),  # default on the top edge, like Pusher
    ]
    ranges = {"hard": (np.array([8.0, 0.005]), np.array([11.0, 0.0067]))}
    return RandomizationSpace("test/Env-v0", dims, ranges)


def test_normalized_edges_map_exactly_to_training_edges():
    space = make_space()
    np.testing.assert_array_equal(space.from_normalized([0.0, 0.0]), [8.0, 0.0067])
    np.testing.assert_array_equal(space.from_normalized([1.0, 1.0]), [20.0, 0.01])
    np.testing.assert_array_equal(space.to_normalized([8.0, 0.0067]), [0.0, 0.0])
    np.testing.assert_array_equal(space.to_normalized([20.0, 0.01]), [1.0, 1.0])


def test_round_trip_both_ways():
    space = make_space()
    u = np.random.default_rng(0).random((200, 2))
    np.testing.assert_allclose(space.to_normalized(space.from_normalized(u)), u, rtol=0, atol=1e-12)
    x = space.from_normalized(u)
    np.testing.assert_allclose(space.from_normalized(space.to_normalized(x)), x, rtol=1e-13, atol=0)
    # the midpoint is where it should be (a wrong mapping direction would fail here)
    np.testing.assert_allclose(space.from_normalized([0.5, 0.5]), [14.0, 0.00835], rtol=1e-14)


def test_reference_and_reference_normalized():
    space = make_space()
    np.testing.assert_array_equal(space.reference(), [13.0, 0.01])
    assert space.reference().dtype == np.float64
    np.testing.assert_allclose(space.reference_normalized(), [5.0 / 12.0, 1.0], rtol=1e-15)
    np.testing.assert_array_equal(space.from_normalized(space.reference_normalized())[1], 0.01)


def test_values_outside_training_but_inside_a_named_range_are_allowed():
    space = make_space()
    u = space.to_normalized([9.0, 0.005])
    assert u[1] < 0.0  # the test range lies below the training range
    np.testing.assert_allclose(space.from_normalized(u), [9.0, 0.005], rtol=1e-13)


def test_sample_uniform_is_unit_cube_and_seeded():
    space = make_space()
    a = space.sample_uniform(np.random.default_rng(3), 5000)
    b = space.sample_uniform(np.random.default_rng(3), 5000)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (5000, 2) and a.min() >= 0.0 and a.max() < 1.0
    assert abs(a.mean() - 0.5) < 0.02 and abs(a.std() - np.sqrt(1 / 12)) < 0.02
    physical = space.from_normalized(a)
    assert physical[:, 0].min() >= 8.0 and physical[:, 0].max() <= 20.0


def test_range_boxes_and_with_training_range():
    space = make_space()
    assert space.range_names == ["hard", "train"]
    lo, hi = space.range_box("train")
    np.testing.assert_array_equal(lo, [8.0, 0.0067])
    oracle = space.with_training_range("hard")
    np.testing.assert_array_equal(oracle.range_box("train")[0], [8.0, 0.005])
    np.testing.assert_array_equal(oracle.from_normalized([1.0, 1.0]), [11.0, 0.0067])
    # the allowed limits do not shrink: the default stays valid
    np.testing.assert_array_equal(oracle.validate(space.reference()), space.reference())
    assert oracle.env_id == space.env_id and oracle.names == space.names


def test_point_training_range_maps_everything_to_the_point():
    dims = [Dimension("gain", 1.0, 0.3, 2.0)]
    space = RandomizationSpace("t", dims, {"hard": (np.array([0.2]), np.array([0.2]))})
    oracle = space.with_training_range("hard")
    np.testing.assert_array_equal(oracle.from_normalized([[0.0], [0.7], [1.0]]), [[0.2], [0.2], [0.2]])
    np.testing.assert_array_equal(oracle.to_normalized([0.2]), [0.5])


def test_mapping_input_in_any_order():
    space = make_space()
    np.testing.assert_array_equal(space.validate({"friction": 0.008, "power": 10.0}), [10.0, 0.008])


def test_dict_and_yaml_round_trip(tmp_path):
    space = make_space()
    again = RandomizationSpace.from_dict(space.to_dict())
    assert again == space
    path = tmp_path / "space.yaml"
    space.to_yaml(path)
    assert RandomizationSpace.from_yaml(path) == space
    np.testing.assert_array_equal(RandomizationSpace.from_yaml(path).limits()[0], space.limits()[0])


def test_yaml_multipliers_and_default_ranges(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "env_id: x/Y-v0\n"
        "dimensions:\n"
        "  - {name: a, default: 2.0, train: {multiplier: [0.5, 2.0]}}\n"
        "  - {name: b, default: 1.0, train: {absolute: [0.0, 3.0]}, limits: {absolute: [-1.0, 5.0]}}\n"
        "ranges:\n"
        "  hard: {a: {multiplier: 0.25}}\n"
    )
    space = RandomizationSpace.from_yaml(path)
    np.testing.assert_array_equal(space.range_box("train")[0], [1.0, 0.0])
    np.testing.assert_array_equal(space.range_box("train")[1], [4.0, 3.0])
    lo, hi = space.range_box("hard")
    np.testing.assert_array_equal(lo, [0.5, 1.0])  # b not listed: stays at its default
    np.testing.assert_array_equal(hi, [0.5, 1.0])
    np.testing.assert_array_equal(space.limits()[0], [0.5, -1.0])
    np.testing.assert_array_equal(space.limits()[1], [4.0, 5.0])


@pytest.mark.parametrize(
    "env_id", ["adr/LunarLander-v0", "adr/Pusher3DOF-v0", "adr/ErgoReacher-v0", "adr/ErgoPusher-v0"]
)
def test_packaged_spaces_load_and_round_trip(env_id):
    space = load_space(env_id)
    assert space.env_id == env_id
    assert "train" in space.range_names and "hard" in space.range_names
    assert RandomizationSpace.from_dict(space.to_dict()) == space
    u = space.sample_uniform(np.random.default_rng(0), 50)
    np.testing.assert_allclose(space.to_normalized(space.from_normalized(u)), u, atol=1e-12)


def test_packaged_values_match_the_paper():
    lunar = load_space("adr/LunarLander-v0")
    np.testing.assert_array_equal(lunar.reference(), [13.0])
    np.testing.assert_array_equal(lunar.range_box("train")[0], [8.0])
    np.testing.assert_array_equal(lunar.range_box("hard")[1], [11.0])
    pusher = load_space("adr/Pusher3DOF-v0")
    np.testing.assert_allclose(pusher.range_box("train")[0], [0.0067, 0.01675])
    np.testing.assert_allclose(pusher.range_box("test")[0], [0.005, 0.0125])
    np.testing.assert_array_equal(pusher.reference_normalized(), [1.0, 1.0])
