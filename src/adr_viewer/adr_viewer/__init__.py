"""Live inspection of a running ADR graph: a web page served over HTTP (``viewer_node``) and rviz2 markers."""
