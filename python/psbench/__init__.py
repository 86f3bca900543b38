"""psbench: launches the native measuring node (psbench-node) and reports its results."""

__version__ = "0.1.0"
