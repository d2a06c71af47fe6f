"""Zero-shot deployment of a trained Ergo policy on the Poppy Ergo Jr: the policy runner node.

It loads a run's actor (``adr_core``: checkpoints, the envs' observation layout), drives the arm through the
``poppy_driver`` node's topics and services (no import of the driver: the driver stays free of torch and adr_core),
and reports every episode. See docs/deploy_real.md.
"""
