"""The bottom layer of adr_core: config fields (``option``), seeding, checkpoint I/O. Imports nothing else of
adr_core, and everything else may import it (tests/core/test_layers.py keeps the layers one way)."""
