"""Claim 13 (issue 17): OpenRLHF's k2 in the loss against k1, as a reward and as a loss.

OpenRLHF 0.11.2's help calls k2 as a loss "nearly equivalent to k1", and its
code comments k2 as "approximately equivalent to one-step KL penalty with k1"
(k1 in the reward).  The lab answered "it is not"; the caveat now says it holds
for k1 used as a reward (on-policy, the same expected gradient ∇KL[π_θ‖π_ref])
and not for k1 used as a loss (expected gradient 0).  Checked exactly with
kl_core.gradients.expected over the Gradients page's on-policy settings (K = 2 … 10,
drift −3 … 3, both π_ref of its menu), clamps inactive; where OpenRLHF's clamps bite, the difference
is theirs alone.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import i18n
from kl_core.doctor.diagnosis import clamp_bite
from kl_core.gradients.expected import expected_gradient, true_gradients
from kl_core.libraries.crosswalk import lookup
from lab.notes import gradients as gnotes
from lab.token_setting import K_MAX

K2_LOSS = lookup("OpenRLHF", "k2", acts_on="loss")
K1_REWARD = lookup("OpenRLHF", "k1", acts_on="reward")
K1_LOSS = lookup("OpenRLHF", "k1", acts_on="loss")
REFERENCES = tuple(gnotes.REFERENCES)  # the page's π_ref menu: uneven (the default) and uniform
SETTINGS = [(k, d, ref) for ref in REFERENCES for k in range(2, K_MAX + 1)
            for d in (-3.0, -1.0, -0.05, 0.5, 1.0, 2.0, 3.0)]
#: Share of each reference's sweep where no token's |log r| reaches the clamps (counted below).
INACTIVE_AT_LEAST = {"uniform": 0.75, "uneven": 0.55}


def _unclamped(e):
    return dataclasses.replace(e, value_clamp=None, logr_clamp=None)


def test_the_caveat_says_so():
    text = str(K2_LOSS.caveat)
    assert "'is nearly equivalent to k1'" in text and "one-step KL penalty with k1" in text
    assert "That holds for k1 used as a reward: on-policy its expected gradient is ∇KL[π_θ‖π_ref], as k2's in the loss is." in text
    assert "It does not hold for k1 used as a loss, whose expected gradient is zero." in text
    assert "it is not" not in text
    with i18n.using("zh"):
        zh = i18n.message(K2_LOSS.caveat)
    assert "作为奖励的 k1" in zh and "作为损失的 k1" in zh and "期望梯度为零" in zh


@pytest.mark.parametrize(("k", "drift", "reference"), SETTINGS)
def test_on_policy_k2_loss_equals_k1_reward_not_k1_loss(k, drift, reference):
    s, _ = gnotes.setting(k, drift, "", True, 0.0, "", reference)
    policy, ref = np.array(s.policy), np.array(s.ref)
    rev, _fwd = true_gradients(policy, ref)
    scale = np.linalg.norm(rev)
    g_k2 = expected_gradient(_unclamped(K2_LOSS), policy, ref)
    g_k1r = expected_gradient(_unclamped(K1_REWARD), policy, ref)
    g_k1l = expected_gradient(_unclamped(K1_LOSS), policy, ref)
    np.testing.assert_allclose(g_k2, rev, atol=1e-12 * max(scale, 1.0))
    np.testing.assert_allclose(g_k1r, g_k2, atol=1e-12 * max(scale, 1.0))
    np.testing.assert_allclose(g_k1l, 0.0, atol=1e-12)
    if drift != 0.0:
        assert scale > 1e-6                        # so "k1 as a loss: zero" is not "everything is zero"
    # the library's clamped options agree too while no token's |log r| reaches the clamps
    lp = policy - np.logaddexp.reduce(policy)
    lr = ref - np.logaddexp.reduce(ref)
    if np.abs(lr - lp).max() < min(clamp_bite(K2_LOSS), clamp_bite(K1_REWARD)):
        np.testing.assert_allclose(expected_gradient(K2_LOSS, policy, ref),
                                   expected_gradient(K1_REWARD, policy, ref), atol=1e-12 * max(scale, 1.0))


@pytest.mark.parametrize("reference", REFERENCES)
def test_most_of_the_sweep_has_the_clamps_inactive(reference):
    inactive = total = 0
    for k, drift, ref in SETTINGS:
        if ref != reference:
            continue
        s, _ = gnotes.setting(k, drift, "", True, 0.0, "", ref)
        p, r = np.array(s.policy), np.array(s.ref)
        t = (r - np.logaddexp.reduce(r)) - (p - np.logaddexp.reduce(p))
        inactive += bool(np.abs(t).max() < clamp_bite(K2_LOSS))
        total += 1
    # uniform: 50 of 63, the largest drifts reach √20; uneven: 36 of 63, π_ref's own logits differ by 2
    assert inactive >= INACTIVE_AT_LEAST[reference] * total
