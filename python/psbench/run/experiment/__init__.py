"""Experiment files: one YAML file describing many runs (docs/experiments.md).

load reads the file with line numbers, schema and params check what is written, expand
builds the runs (matrix, exclude, repetitions, filter), check holds each run against its
driver's capabilities, plan ties these together and maps a run to a MeasureSpec.
"""

from psbench.base.problems import ExperimentError, Problem
from psbench.run.experiment.plan import Plan, prepare

__all__ = ["ExperimentError", "Plan", "Problem", "prepare"]
