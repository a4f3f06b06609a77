"""Log-ratios of two categoricals from their logits (an audit: logits 1e-12 apart)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from kl_core.estimation.distributions import parse
from kl_core.estimation.exact import estimator_moments, kl
from kl_core.estimation.families.categorical import log_ratio_from_logits


def _exact(zq, zp):
    mpmath.mp.dps = 50
    q = [mpmath.exp(mpmath.mpf(z)) for z in zq]
    p = [mpmath.exp(mpmath.mpf(z)) for z in zp]
    sq, sp = mpmath.fsum(q), mpmath.fsum(p)
    q, p = [x / sq for x in q], [x / sp for x in p]
    lr = [mpmath.log(b / a) for a, b in zip(q, p, strict=True)]
    return q, lr


@pytest.mark.parametrize(("zq", "zp"), [((0.0, 0.0), (0.0, 1e-12)), ((0.3, -1.2, 2.0), (0.3, -1.2, 2.0 + 1e-9)),
                                        ((0.0, 5.0, -3.0), (1.0, 2.0, 0.5)), ((0.0, -800.0), (0.0, 0.0))])
def test_log_ratios_match_high_precision(zq, zp):
    """The difference of two log-softmaxes near −0.69 kept 1e-16 of rounding: 1e-4 of a log-ratio of 5e-13."""
    _, lr = _exact(zq, zp)
    got = log_ratio_from_logits(zq, zp)
    for g, t in zip(got, lr, strict=True):
        assert float(g) == pytest.approx(float(t), rel=1e-12, abs=1e-300)


def test_a_pair_a_hair_apart_has_its_exact_figures():
    """An audit: categorical(0,0) against categorical(0,1e-12): KL printed 1.24994e-25 (it is 1.25e-25) and k1's
    stdev/true 4000088464184 (it is 4e12)."""
    q, p = parse("categorical(0,0)"), parse("categorical(0,1e-12)")
    qs, lr = _exact((0.0, 0.0), (0.0, 1e-12))
    true_kl = -mpmath.fsum(a * b for a, b in zip(qs, lr, strict=True))
    assert kl(q, p) == pytest.approx(float(true_kl), rel=1e-9)
    m = estimator_moments("k1", q, p)
    var = mpmath.fsum(a * b**2 for a, b in zip(qs, lr, strict=True)) - true_kl**2
    assert np.sqrt(m.var) / kl(q, p) == pytest.approx(float(mpmath.sqrt(var) / true_kl), rel=1e-9)


def test_logits_that_differ_by_a_constant_give_exactly_zero():
    assert not np.any(log_ratio_from_logits([0.1, 0.2, 0.3], [1.1, 1.2, 1.3]))
    assert kl(parse("categorical(0.1,0.2,0.3)"), parse("categorical(1.1,1.2,1.3)")) == 0.0
