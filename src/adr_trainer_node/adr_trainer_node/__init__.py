"""DDPG/TD3 learner of the ADR graph as a ROS 2 node."""
