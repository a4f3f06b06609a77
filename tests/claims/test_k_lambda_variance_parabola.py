"""Claim 17 (issue 17): kλ's gradient *variance* is the parabola in λ; the chart draws its square root.

The Gradients page's λ chart plots ``k_lambda_spread`` (a standard deviation)
and its caption said "its spread is a parabola in λ".  Over the page's token
settings (K = 2 … 10, drift −3 … 3, both π_ref, on-policy and with an older sampler) this
checks with kl_core.gradients.expected: the squared spread is a quadratic in λ (exact
second differences, and the per-λ ``gradient_spread``), the spread itself is
not; both are least at the caption's λ; the value's λ* is the minimiser of
Var(kλ) computed here by hand; and the caption's first sentence holds: the
expected gradient is the same for every λ on-policy, and changes with λ
off-policy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from kl_core.gradients.expected import (
    expected_gradient,
    gradient_spread,
    gradient_table,
    k_lambda_spread,
)
from lab.format import lam_text
from lab.notes import gradients as notes
from lab.token_setting import K_MAX

LAM_MIN, LAM_MAX = -1.0, 3.0   # pages/gradients.py
SETTINGS = [(k, drift, on, old, ref) for ref in notes.REFERENCES for k in (2, 5, K_MAX)
            for drift in (-3.0, 0.05, 1.0, 3.0) for on, old in ((True, 0.0), (False, 0.5), (False, -2.0))]


def test_the_page_range():
    page = open("pages/gradients.py", encoding="utf-8").read()
    assert f"LAM_MIN, LAM_MAX = {LAM_MIN}, {LAM_MAX}" in page
    assert "lams = np.linspace(*notes.lambda_chart_range(table, LAM_MIN, LAM_MAX), 81)" in page


@pytest.mark.parametrize(("k", "drift", "on", "old", "ref"), SETTINGS)
def test_the_caption_at_every_setting(k, drift, on, old, ref):
    s, _ = notes.setting(k, drift, "", on, old, "", ref)
    table = gradient_table(s.policy, s.ref, s.sampler, 1.0)
    lams = np.linspace(*notes.lambda_chart_range(table, LAM_MIN, LAM_MAX), 81)
    spread = k_lambda_spread(s.policy, s.ref, s.sampler, lams)
    var = spread**2
    # the variance is a parabola: constant second differences, equal to the per-λ core call
    d2 = np.diff(var, 2)
    assert np.ptp(d2) <= 1e-9 * max(var.max(), 1e-300)
    assert d2[0] > 0
    direct = np.array([gradient_spread("k_lambda", s.policy, s.ref, s.sampler, lam=float(x)) for x in lams[::10]])
    # near its least value the spread is a difference of terms of the curve's size: tolerance from the curve's scale
    np.testing.assert_allclose(direct, spread[::10], rtol=1e-9, atol=1e-9 * spread.max())
    # the spread (what the chart draws) is not: its second differences vary
    assert np.ptp(np.diff(spread, 2)) > 1e-6 * np.abs(np.diff(spread, 2)).max()
    # both least at λ_grad: the vertex of the fitted parabola, and the minimum on a fine grid
    a, b, _c = np.polyfit(lams, var, 2)
    assert -b / (2 * a) == pytest.approx(table.lam_grad_opt, abs=1e-6 * (1 + abs(table.lam_grad_opt)))
    fine = np.linspace(table.lam_grad_opt - 0.01, table.lam_grad_opt + 0.01, 201)
    assert abs(fine[np.argmin(k_lambda_spread(s.policy, s.ref, s.sampler, fine))] - table.lam_grad_opt) <= 1e-4
    # the value's λ*: argmin over λ of Var_π(λ(r − 1) − log r), r = π_ref/π_θ, by hand
    pi = np.exp(table.policy_log_probs)
    logr = table.ref_log_probs - table.policy_log_probs
    r = np.exp(logr)
    cov = np.sum(pi * (r - 1.0) * (logr - np.sum(pi * logr)))
    assert table.lam_value_opt == pytest.approx(cov / np.sum(pi * (r - 1.0) ** 2), rel=1e-9)

    text = notes.lambda_caption(table)
    assert "spread is a parabola" not in text and "its variance is a parabola in λ" in text
    assert "the chart draws its square root" in text
    # λ as every page prints it (kl_core.numbers.lam_text: 3 significant digits, more near 0 and 1)
    # a negative λ is written with the minus sign, "−", in prose
    shown = re.search(r"Both are least at λ = (−?[\d.e+−-]+?)[.,]? ", text).group(1)
    assert shown == lam_text(table.lam_grad_opt).replace("-", "−") and "-" not in shown.split("e")[0]
    assert float(shown.replace("−", "-")) == pytest.approx(table.lam_grad_opt, rel=5e-3, abs=1e-12)
    value = re.search(r"not at (?:the value's )?λ\* = (−?[\d.e+−-]+?)[.,]? ", text)
    if value is not None:
        assert value.group(1) == lam_text(table.lam_value_opt).replace("-", "−")
        assert lam_text(table.lam_grad_opt) != lam_text(table.lam_value_opt)
    else:
        assert lam_text(table.lam_grad_opt) == lam_text(table.lam_value_opt) or table.lam_value_any
    # the first sentence: unbiased for every λ on-policy; off-policy the mean moves with λ
    means = [expected_gradient("k_lambda", s.policy, s.ref, s.sampler, lam=x) for x in (LAM_MIN, 1.0, LAM_MAX)]
    moved = max(float(np.abs(m - means[1]).max()) for m in means)
    if on:
        assert text.startswith("kλ's gradient is unbiased for every λ")
        assert moved <= 1e-12
        np.testing.assert_allclose(means[1], table.true_reverse, atol=1e-12)
    else:
        assert text.startswith(r"With tokens from $\pi_\mathrm{old}$, kλ's expected gradient changes with λ")
        assert moved > 1e-6
