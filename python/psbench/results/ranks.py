"""Nearest-rank percentiles: the q-th percentile of n values is the ceil(q/100 * n)-th
smallest, the rank computed in integers from q as an exact decimal fraction (99.9 =
999/1000), never in floating point (psbench.results.stats re-exports these)."""

from fractions import Fraction

import numpy as np


def nearest_rank_index(q, n: int) -> int:
    """0-based index of the q-th percentile among n sorted values: ceil(q/100 * n) - 1,
    at least 0. q as written in decimal (50, 99.9, "99.99"): a float is read by its
    shortest decimal form, so 99.9 is exactly 999/10."""
    return index_at(Fraction(str(q)) / 100, n)


def index_at(p: Fraction, n: int) -> int:
    """0-based nearest-rank index of the fraction p (0..1) among n: ceil(p n) - 1, >= 0."""
    rank = -((-p.numerator * n) // p.denominator)
    return max(rank, 1) - 1


def nearest_rank(values, q, axis=None):
    """The q-th percentile by nearest rank (a value of `values`); along `axis` of a 2-D
    array, one per row or column. Partial sort only."""
    values = np.asarray(values)
    if axis is None:
        values = values.ravel()
        index = nearest_rank_index(q, values.size)
        return np.partition(values, index)[index]
    index = nearest_rank_index(q, values.shape[axis])
    return np.take(np.partition(values, index, axis=axis), index, axis=axis)
