"""A result set on disk and what is computed from it: the store and run directories,
raw samples, statistics, loss accounting, configurations and significance tests.
Reads files only, never a live run.
"""
