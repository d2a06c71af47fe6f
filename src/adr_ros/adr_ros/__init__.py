"""Shared ROS 2 plumbing of the ADR nodes: numpy <-> message conversion, QoS profiles, diagnostics."""
