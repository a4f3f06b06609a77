"""Categorical pairs where a probability underflows (a logit ~745 below the others)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from kl_core.estimation.distributions import Categorical
from kl_core.estimation.exact import (
    CHI2_OVERFLOW_NOTE,
    estimator_moments,
    f_divergence,
    kl,
    lambda_star,
)


def _closed(gap: float) -> dict[str, float]:
    # q = (1/2, 1/2, ε/2), ε = e^-gap; p = (1/3, 1/3, 1/3); exact up to O(ε)
    return {
        "kl_qp": math.log(1.5),
        "kl_pq": (2 / 3) * math.log(2 / 3) + (1 / 3) * (math.log(1 / 3) + gap + math.log(2)),
        "hellinger": 2 * (1 / math.sqrt(2) - 1 / math.sqrt(3)) ** 2 + 1 / 3,
        "tv": 1 / 3,
        "js": 0.5 * (2 * (0.5 * math.log(2 * 0.5 / (5 / 6)) + (1 / 3) * math.log(2 * (1 / 3) / (5 / 6)))
                     + (1 / 3) * math.log(2)),
    }


@pytest.mark.parametrize("gap", [700.0, 800.0, 2000.0])
def test_divergences_match_the_closed_forms(gap):
    q, p = Categorical((0.0, 0.0, -gap)), Categorical((0.0, 0.0, 0.0))
    want = _closed(gap)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kl(q, p) == pytest.approx(want["kl_qp"], rel=1e-12)
        for name, value in want.items():
            assert f_divergence(name, p, q) == pytest.approx(value, rel=1e-12), name
        chi2 = f_divergence("pearson", p, q)
    # χ² = (2/9)·e^gap − 1/3 + …: finite in a double at 700, past it at 800 and 2000
    if gap == 700.0:
        assert chi2 == pytest.approx((2 / 9) * math.exp(gap), rel=1e-12)
    else:
        assert chi2 == math.inf


@pytest.mark.parametrize("gap", [800.0, 2000.0])
def test_lambda_star_says_chi2_overflows(gap):
    ls = lambda_star(Categorical((0.0, 0.0, -gap)), Categorical((0.0, 0.0, 0.0)))
    assert ls.value == 0.0 and ls.note == CHI2_OVERFLOW_NOTE


def test_lambda_star_at_gap_700_is_tiny_and_positive():
    ls = lambda_star(Categorical((0.0, 0.0, -700.0)), Categorical((0.0, 0.0, 0.0)))
    q, p = Categorical((0.0, 0.0, -700.0)), Categorical((0.0, 0.0, 0.0))
    want = (kl(p, q) + kl(q, p)) / ((2 / 9) * math.exp(700.0))
    assert ls.value == pytest.approx(want, rel=1e-10)


def test_k3_mean_keeps_the_underflowed_mass():
    m = estimator_moments("k3", Categorical((0.0, 0.0, -800.0)), Categorical((0.0, 0.0, 0.0)))
    assert m.mean == pytest.approx(math.log(1.5), rel=1e-12)
    assert np.isinf(m.var)  # E_q[r²] = (2/9)e^800: past a double
