"""Algorithm 1's loop, written once, and what composes it: the engine (loop.py) runs the iterations, an executor
carries out each iteration's steps (steps.py: the protocol; local_steps.py: in this process), hooks do the
bookkeeping around them (hooks.py: early stop, run files, learning curve, checkpoints, progress).

Runners hold an engine rather than extend it: the in-process ``Trainer`` (training/trainer.py), the ``Probe``
(probe/), the trainer node (remote.py: the engine on the graph's clock) and ``ADRLoop`` (adr_loop.py). Kept
import-light on purpose: ``from adr_core.engine.loop import Engine`` etc.
"""
