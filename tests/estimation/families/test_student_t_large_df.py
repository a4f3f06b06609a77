"""Student t with large ν: the log normaliser without cancellation, and KL against N(0, 1)."""

from __future__ import annotations

import math

import pytest

from kl_core.estimation.distributions import Gaussian, StudentT, practical_issue
from kl_core.estimation.exact import kl
from kl_core.estimation.families.student_t import log_t_norm

mp = pytest.importorskip("mpmath")


def _reference(nu: float) -> float:
    with mp.workdps(400):  # ν + 1 exactly, up to ν = 1e300
        n = mp.mpf(nu)
        return float(mp.loggamma((n + 1) / 2) - mp.loggamma(n / 2) - mp.log(n * mp.pi) / 2)


def _reference_gap(nu: float):
    with mp.workdps(400):
        n = mp.mpf(nu)
        return mp.loggamma((n + 1) / 2) - mp.loggamma(n / 2) - mp.log(n / 2) / 2


@pytest.mark.parametrize("nu", [0.5, 3.0, 49.0, 50.0, 1e3, 1e8, 1e12, 1e15, 1e40, 1e300])
def test_log_normaliser_matches_mpmath(nu):
    ref = _reference(nu)
    assert log_t_norm(nu) == pytest.approx(ref, rel=1e-14, abs=1e-15)
    # the part that matters against a normal: the difference from −½ log 2π
    if nu >= 1e3:
        with mp.workdps(60):
            gap = float(_reference_gap(nu))
        assert log_t_norm(nu) + 0.5 * math.log(2 * math.pi) == pytest.approx(gap, rel=1e-6)


@pytest.mark.parametrize("nu", [1e8, 1e12, 1e15, 1e40])
def test_kl_to_normal_is_7_over_4_nu_squared(nu):
    # KL[t_ν ‖ N(0,1)] = 7/(4ν²) + O(ν⁻³) (expanding the log-density in 1/ν)
    assert kl(StudentT(nu), Gaussian(0, 1)) == pytest.approx(1.75 / nu**2, rel=1e-6)
    assert kl(Gaussian(0, 1), StudentT(nu)) == pytest.approx(1.75 / nu**2, rel=1e-6)


def test_df_beyond_the_quadratures_reach_is_named():
    assert practical_issue(StudentT(1e300)).startswith("df")
    assert practical_issue(StudentT(1e40)) == ""
