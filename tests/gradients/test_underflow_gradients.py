"""Expected gradients and spreads when a policy probability underflows (logit gap ≳ 745).

The second half checks a nearly one-hot policy, logits (0, L, 0) with L = 400 … 800, against
an independent mpmath computation (600 digits: 1 − π_θ of the likeliest token is 2e^{−L}),
written from the formulas of :mod:`kl_core.gradients.expected`'s docstrings:
g(x) = c(x)(e_x − π), E_s g = Σ_x s(x) c(x)(e_x − π), spread² = Σ_x s(x)‖c(x)(e_x − π) − E_s g‖²,
∇KL[π‖ρ] = π ⊙ (k1 − E_π k1), and c(x) from the module's table.
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from kl_core.gradients.expected import (
    expected_gradient,
    gradient_spread,
    gradient_table,
    lambda_grad_opt,
)


@pytest.mark.parametrize("gap", [700.0, 800.0, 2000.0])
def test_k3_expected_gradient_is_pi_minus_rho(gap):
    policy, ref = [0.0, 0.0, -gap], [0.0, 0.0, 0.0]
    want = np.array([0.5, 0.5, 0.0]) - 1 / 3  # ∇KL[π_ref‖π_θ] = π − ρ
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(expected_gradient("k3", policy, ref), want, rtol=1e-12, atol=1e-15)
        row = gradient_table(policy, ref).row("k3")
    assert row.target == "forward_kl"
    np.testing.assert_allclose(row.expected_grad, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("gap", [700.0, 800.0])
def test_k3_spread_fits_a_double(gap):
    # E_π‖c(e_x − π)‖² is dominated by token 3: π₃(1 − r₃)²‖e₃ − π‖² ≈ (ρ₃²/π₃)·3/2 = e^gap/3
    row = gradient_table([0.0, 0.0, -gap], [0.0, 0.0, 0.0]).row("k3")
    assert row.grad_spread == pytest.approx(math.exp(gap / 2) / math.sqrt(3), rel=1e-9)


# --------------------------------------------------------------------------- #
# A nearly one-hot policy, against mpmath
# --------------------------------------------------------------------------- #
_DPS = 600


def _mp_log_probs(logits):
    th = [mp.mpf(x) for x in logits]
    top = max(th)
    lse = top + mp.log(mp.fsum(mp.e ** (x - top) for x in th))
    return [x - lse for x in th]


def _mp_coef(name, t, w, lam):
    """c(x) from the module docstring's table, and the crosswalk entries these tests use."""
    if name == "k1":
        return mp.mpf(1)
    if name in ("k2", "k1_score", "verl:k3+"):
        return -t
    if name == "k3":
        return 1 - mp.e**t
    if name == "k3_pq":
        return -t * mp.e**t
    if name == "k_lambda":
        return 1 - mp.mpf(lam) - t
    if name == "verl:low_var_kl":  # k3 with log r clamped to ±20 and the value to ±10
        value = mp.e**t - 1 - t
        return 1 - mp.e**t if abs(t) <= 20 and abs(value) <= 10 else mp.mpf(0)
    if name == "OpenRLHF:k1+unbiased_gradient":  # min(π/s, 10)·(−t)
        return min(w, 10) * -t
    raise AssertionError(name)


def _mp_row(name, policy, ref, sampler=None, lam=1.0):
    """(E_s g, spread, ∇KL[π‖ρ], λ_grad, λ*) in mpmath."""
    with mp.workdps(_DPS):
        lp, lr = _mp_log_probs(policy), _mp_log_probs(ref)
        ls = lp if sampler is None else _mp_log_probs(sampler)
        pi, rho, s = ([mp.e**x for x in v] for v in (lp, lr, ls))
        k = len(pi)
        t = [a - b for a, b in zip(lr, lp, strict=True)]
        c = [_mp_coef(name, t[x], mp.e ** (lp[x] - ls[x]), lam) for x in range(k)]
        u = [[(1 if x == y else 0) - pi[y] for y in range(k)] for x in range(k)]
        g = [mp.fsum(s[x] * c[x] * u[x][y] for x in range(k)) for y in range(k)]
        spread = mp.sqrt(mp.fsum(s[x] * mp.fsum((c[x] * u[x][y] - g[y]) ** 2 for y in range(k)) for x in range(k)))
        k1 = [-x for x in t]
        ek1 = mp.fsum(p * v for p, v in zip(pi, k1, strict=True))
        rev = [p * (v - ek1) for p, v in zip(pi, k1, strict=True)]
        # λ_grad = 1 − a*, a* = (E_s[t‖u‖²] − E_s[t u]·E_s[u]) / (E_s‖u‖² − ‖E_s u‖²)
        nu = [mp.fsum(z * z for z in row) for row in u]
        eu = [mp.fsum(s[x] * u[x][y] for x in range(k)) for y in range(k)]
        etu = [mp.fsum(s[x] * t[x] * u[x][y] for x in range(k)) for y in range(k)]
        num = mp.fsum(s[x] * t[x] * nu[x] for x in range(k)) - mp.fsum(a * b for a, b in zip(etu, eu, strict=True))
        den = mp.fsum(s[x] * nu[x] for x in range(k)) - mp.fsum(z * z for z in eu)
        # λ* = (KL[ρ‖π] + KL[π‖ρ]) / χ²(ρ‖π)
        sym = mp.fsum((r - p) * (a - b) for r, p, a, b in zip(rho, pi, lr, lp, strict=True))
        chi2 = mp.fsum((r - p) ** 2 / p for r, p in zip(rho, pi, strict=True))
        return g, spread, rev, 1 - num / den, sym / chi2


def _mp_norm(v):
    with mp.workdps(_DPS):
        return mp.sqrt(mp.fsum(x * x for x in v))


def _mp_cos(a, b):
    with mp.workdps(_DPS):
        return mp.fsum(x * y for x, y in zip(a, b, strict=True)) / (_mp_norm(a) * _mp_norm(b))


GAPS = [400.0, 600.0, 700.0, 740.0, 800.0]
UNIFORM = [0.0, 0.0, 0.0]


def _near_one_hot(gap):
    return [0.0, gap, 0.0]


@pytest.fixture(scope="module")
def mp_row():
    """:func:`_mp_row`, after checking it against the core at moderate logits (where doubles are exact)."""
    policy, ref, old = [0.0, 2.0, 0.0], [0.3, 0.0, -0.2], [0.1, 1.0, 0.5]
    table = gradient_table(policy, ref, sampler=old, lam=0.7)
    for name in ("k1", "k2", "k3", "k3_pq", "k_lambda", "verl:low_var_kl", "OpenRLHF:k1+unbiased_gradient"):
        g, spread, *_ = _mp_row(name, policy, ref, old, lam=0.7)
        row = table.row(name)
        np.testing.assert_allclose(row.expected_grad, [float(x) for x in g], rtol=1e-12, atol=1e-15)
        assert row.grad_spread == pytest.approx(float(spread), rel=1e-12)
    return _mp_row


@pytest.mark.parametrize("gap", GAPS)
@pytest.mark.parametrize("name", ["k2", "k1_score", "verl:k3+"])
def test_k2_on_policy_is_reverse_kl_not_zero_at_a_nearly_one_hot_policy(name, gap, mp_row):
    # E_π∇k2 = ∇KL[π‖ρ] (Schulman): a vector of size ~L·e^{−L}, not zero.  Its entries' squares
    # underflow at L = 400 (the row said "zero", ‖E g‖ 0, cosines None); at L = 800 the entries do.
    table = gradient_table(_near_one_hot(gap), UNIFORM)
    row = table.row(name)
    g, _, rev, _, _ = mp_row(name, _near_one_hot(gap), UNIFORM)
    assert row.target == "reverse_kl"
    assert row.log_grad_norm == pytest.approx(float(mp.log(_mp_norm(g))), rel=1e-12)
    assert row.cos_reverse == pytest.approx(1.0, rel=1e-12)
    assert row.cos_forward == pytest.approx(float(_mp_cos(g, [1, -2, 1]) * -1), rel=1e-9)


@pytest.mark.parametrize("gap", GAPS)
def test_true_reverse_gradient_keeps_its_entries_past_a_double(gap, mp_row):
    table = gradient_table(_near_one_hot(gap), UNIFORM)
    _, _, rev, _, _ = mp_row("k2", _near_one_hot(gap), UNIFORM)
    sign, log_abs = table.true_reverse_log
    np.testing.assert_array_equal(sign, [-1.0, 1.0, -1.0])
    np.testing.assert_allclose(log_abs, [float(mp.log(abs(x))) for x in rev], rtol=1e-12)


@pytest.mark.parametrize("gap", GAPS)
@pytest.mark.parametrize("name", ["k1", "k2", "k3", "k3_pq", "verl:low_var_kl"])
def test_spread_is_the_mpmath_one_in_logs(name, gap, mp_row):
    # at L = 800 the k1 and k2 spreads (3.8e-174, 3.1e-171) were 0; low_var_kl's (1.6e-521) is
    # past a double and only its log is kept
    row = gradient_table(_near_one_hot(gap), UNIFORM).row(name)
    _, spread, *_ = mp_row(name, _near_one_hot(gap), UNIFORM)
    assert row.log_grad_spread == pytest.approx(float(mp.log(spread)), rel=1e-9)
    if 1e-300 < spread < 1e300:
        assert row.grad_spread == pytest.approx(float(spread), rel=1e-9)


@pytest.mark.parametrize("gap", GAPS)
def test_clamped_k3_gives_a_tiny_mixed_gradient_not_zero(gap, mp_row):
    # verl:low_var_kl clamps the small tokens (log r ≈ L): only the likeliest token's
    # c = 1 − r = 2/3 remains, E g = π₁·(2/3)·(e₁ − π), of size ~e^{−L}: parallel to both
    # true gradients, equal to neither
    row = gradient_table(_near_one_hot(gap), UNIFORM).row("verl:low_var_kl")
    g, *_ = mp_row("verl:low_var_kl", _near_one_hot(gap), UNIFORM)
    assert row.target == "mixed"
    assert row.log_grad_norm == pytest.approx(float(mp.log(_mp_norm(g))), rel=1e-12)
    assert row.cos_forward == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("gap", [700.0, 740.0, 800.0])
def test_gradient_optimal_lambda_is_not_the_point_mass_fallback(gap, mp_row):
    # the double sums fell below 1e-300 and returned 1.0; the optimum is ≈ 2 − L
    _, _, _, lam_grad, lam_value = mp_row("k2", _near_one_hot(gap), UNIFORM)
    assert lambda_grad_opt(_near_one_hot(gap), UNIFORM) == pytest.approx(float(lam_grad), rel=1e-12)
    table = gradient_table(_near_one_hot(gap), UNIFORM)
    assert table.log_lam_value_opt == pytest.approx(float(mp.log(lam_value)), rel=1e-12)


@pytest.mark.parametrize("gap", [400.0, 800.0])
def test_k_lambda_spread_at_its_optimum_is_resolved(gap, mp_row):
    # c = 1 − λ − t cancels to its last digits at λ_grad ≈ 2 − L: summed exactly, the spread
    # is the mpmath one at the same (double) λ, not the rounding of the sums (1.5e-171 at L = 400)
    table = gradient_table(_near_one_hot(gap), UNIFORM)
    _, spread, *_ = mp_row("k_lambda", _near_one_hot(gap), UNIFORM, lam=table.lam)
    assert table.row("k_lambda").target == "reverse_kl"
    # to 1e-3 relative: the spread, 1e-73 of the terms it is summed from, also carries the
    # rounding of the log-probabilities themselves (mpmath takes them exact)
    assert table.row("k_lambda").log_grad_spread == pytest.approx(float(mp.log(spread)), abs=1e-3)


@pytest.mark.parametrize("gap", [400.0, 740.0, 800.0])
@pytest.mark.parametrize("name", ["k1", "k3", "OpenRLHF:k1+unbiased_gradient"])
def test_a_uniform_sampler_with_a_nearly_one_hot_policy(name, gap, mp_row):
    # tokens from π_old = uniform: k3's s·c = (1 − r)/3 is −e^{L−1.1}/3, past a double at
    # L = 740 (the table raised "grad contains NaN"); the clipped weight π/s underflows at
    # L = 800, where unbiased_gradient still gives ∇KL[π‖ρ] (an entry of size 1e-345)
    table = gradient_table(_near_one_hot(gap), UNIFORM, sampler=UNIFORM)
    row = table.row(name)
    g, spread, rev, _, _ = mp_row(name, _near_one_hot(gap), UNIFORM, UNIFORM)
    assert row.log_grad_norm == pytest.approx(float(mp.log(_mp_norm(g))), rel=1e-12)
    assert row.log_grad_spread == pytest.approx(float(mp.log(spread)), rel=1e-9)
    want = {"k1": "mixed", "k3": "mixed", "OpenRLHF:k1+unbiased_gradient": "reverse_kl"}[name]
    assert row.target == want


@pytest.mark.parametrize("gap", [740.0, 800.0])
def test_public_functions_agree_with_the_table_row(gap):
    row = gradient_table(_near_one_hot(gap), UNIFORM).row("k1")
    assert gradient_spread("k1", _near_one_hot(gap), UNIFORM) == row.grad_spread > 0
    np.testing.assert_array_equal(expected_gradient("k2", _near_one_hot(gap), UNIFORM),
                                  gradient_table(_near_one_hot(gap), UNIFORM).row("k2").expected_grad)
