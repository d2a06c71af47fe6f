"""pypot driver for the Poppy Ergo Jr (Dynamixel XL-320, protocol 2.0) and the policy runner."""
