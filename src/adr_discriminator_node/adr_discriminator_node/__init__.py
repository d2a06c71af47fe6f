"""Discriminator node: scores randomized trajectories against reference ones."""
