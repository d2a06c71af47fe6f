"""A stand-in Poppy Ergo Jr: emulated XL-320 servos on a pty, moved by PyBullet physics of the arm."""
