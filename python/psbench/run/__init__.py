"""Doing runs: measurement specs, launching psbench-node processes, the services a
driver's manifest asks for and the keeper that stops them, environment facts, progress,
the rate search, and experiment files (run.experiment).
"""
