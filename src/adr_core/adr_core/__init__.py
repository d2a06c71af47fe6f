"""Active Domain Randomization core: plain Python, no ROS imports."""

__version__ = "0.1.0"
