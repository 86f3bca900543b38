"""The few special functions every run's intervals need (results/dependence.py), in the
standard library alone: importing scipy.special for them cost a run 55 ms of its 0.3 s
(bench/run_cost.py). Checked against scipy.special in tests/test_special.py.

The regularised incomplete beta function is Lentz's evaluation of its continued fraction
(the classic one: DLMF 8.17.22, used on the side where it converges fast, with the
symmetry I_x(a, b) = 1 - I_{1-x}(b, a) otherwise); the others follow from it."""

import math

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 100_000


def _continued_fraction(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        step = d * c
        h *= step
        if abs(step - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta ({a}, {b}, {x}) did not converge")


def betainc(a: float, b: float, x: float) -> float:
    """I_x(a, b), a, b > 0, 0 <= x <= 1 (scipy.special.betainc)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
        + a * math.log(x) + b * math.log1p(-x)
    )  # fmt: skip
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _continued_fraction(b, a, 1.0 - x) / b


def normal_sf(x: float) -> float:
    """P(Z > x), Z standard normal (scipy.special.ndtr(-x))."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def t_sf(x: float, df: float) -> float:
    """P(T > x), T Student's t with df degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + x * x))
    return tail if x >= 0 else 1.0 - tail


def t_isf(p: float, df: float) -> float:
    """The x with P(T > x) = p, 0 < p < 1 (scipy.special.stdtrit(df, 1 - p)): bisection
    on t_sf to double precision."""
    if p == 0.5:
        return 0.0
    if p > 0.5:
        return -t_isf(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_sf(high, df) > p:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        if t_sf(middle, df) > p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def f_sf(x: float, d1: float, d2: float) -> float:
    """P(F > x), F with (d1, d2) degrees of freedom (scipy.special.fdtrc(d1, d2, x))."""
    if x <= 0.0:
        return 1.0
    return betainc(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * x))
