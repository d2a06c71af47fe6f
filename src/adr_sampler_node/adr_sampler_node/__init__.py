"""SVPG / uniform / fixed-range sampler of simulator settings as a ROS 2 node."""
