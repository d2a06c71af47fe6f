"""Simulator instance node: runs assigned rollouts in a randomized and a reference env."""
