"""Starting the project's ROS 2 processes from Python, for the integration tests and the graph benchmarks alike:
isolated ROS environments and executables (``ros_processes``), whole training graphs and their metrics
(``graph_runs``), hosts as network namespaces (``netns_hosts``) joined by links with a fixed delay
(``delayed_link``, a user-space relay between two TUN devices). Not installed and not part of the product."""
