"""What every layer needs and nothing psbench-specific depends on: errors that exit 2,
paths, signal handling, option parsing, text tables, how numbers are written (units)
and the drivers' manifests.

Layers, lowest first: base < results < run < report < reproduce < cli. A module
imports only from its own layer or lower ones (tests/test_import_layers.py).
"""
