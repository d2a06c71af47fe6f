"""The policy runner's logic, free of ROS: deploy an ErgoReacher / ErgoPusher policy on the Poppy Ergo Jr.

``policy_runner_node`` (console script ``policy_runner``) is the rclpy shell around these modules; see
docs/deploy_real.md.
"""
