"""Expected gradients and spreads when a policy probability underflows (logit gap ≳ 745)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from kl_core.gradients.expected import expected_gradient, gradient_table


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
