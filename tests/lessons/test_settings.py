"""kl_core.lessons.settings: the token pictures of lesson 5's and lesson 6's settings, against independent sums."""

from __future__ import annotations

import numpy as np
import pytest

from kl_core.gradients.demo import DEMO_DIRECTION
from kl_core.lessons import catalog as core
from kl_core.lessons.settings import SETTINGS, chain_token_shares, policy_pair, token_pair
from kl_core.sequences.markov import drift_pair


@pytest.mark.parametrize(("k", "t"), [(4, 0.5), (6, 1.0), (8, 1.5)])
def test_policy_pair_is_softmax_of_t_v_against_uniform(k: int, t: float) -> None:
    v = np.resize(np.array(DEMO_DIRECTION), k)  # the pattern repeats past six tokens
    want = np.exp(t * v) / np.exp(t * v).sum()
    pair = policy_pair(k, t)
    assert pair.kind == "policy" and pair.k == k
    np.testing.assert_allclose(pair.sampled, want, rtol=1e-12)
    np.testing.assert_allclose(pair.reference, np.full(k, 1 / k), rtol=1e-12)


def test_chain_token_shares_are_the_mean_marginals_of_each_chain() -> None:
    k, drift, length = 4, 0.6, 5
    policy, ref = drift_pair(k, drift, "every")
    for chain, got in ((policy, chain_token_shares(k, drift, length).sampled),
                       (ref, chain_token_shares(k, drift, length).reference)):
        d, total = chain.first_probs, np.zeros(k)
        for _t in range(length):  # d_t = d_{t-1} P, by hand
            total += d
            d = d @ chain.transition_probs
        np.testing.assert_allclose(got, total / length, rtol=1e-12)
        assert got.sum() == pytest.approx(1.0)


def test_chain_token_shares_match_sampled_sequences() -> None:
    k, drift, length = 6, 0.8, 32
    policy, _ref = drift_pair(k, drift, "every")
    x = policy.sample(np.random.default_rng(3), 4000, length)
    seen = np.bincount(x.ravel(), minlength=k) / x.size
    np.testing.assert_allclose(chain_token_shares(k, drift, length).sampled, seen, atol=0.01)


def test_the_tilt_moves_the_policy_towards_token_0_and_none_leaves_the_chains_equal() -> None:
    pair = chain_token_shares(8, 0.5, 64)
    assert pair.kind == "chain" and pair.sampled[0] > pair.reference[0] and pair.sampled[-1] < pair.reference[-1]
    same = chain_token_shares(8, 0.0, 64)
    np.testing.assert_allclose(same.sampled, same.reference)


def test_token_pair_reads_the_params_of_its_setting() -> None:
    np.testing.assert_array_equal(token_pair("policies", {"k": 5, "t": 1.25, "option": "k1"}).sampled,
                                  policy_pair(5, 1.25).sampled)
    np.testing.assert_array_equal(token_pair("chains", {"K": 6, "drift": 0.5, "T": 48}).sampled,
                                  chain_token_shares(6, 0.5, 48).sampled)
    with pytest.raises(ValueError, match="setting must be one of"):
        token_pair("log_ratio", {"logr": 1.0})
    with pytest.raises(ValueError, match=r"need \['t'\]"):
        token_pair("policies", {"k": 5})


def test_the_catalog_names_a_known_picture_for_exactly_the_token_steps() -> None:
    named = {(les.number, s): st.setting for les in core.LESSONS for s, st in enumerate(les.steps, start=1)
             if st.setting}
    assert named == {**{(5, s): "policies" for s in range(1, 6)}, (6, 3): "chains", (6, 4): "chains"}
    assert set(named.values()) <= set(SETTINGS)
    for (lesson, step), setting in named.items():
        q = core.question(lesson, step, 7)
        assert q.setting == setting and token_pair(setting, q.params).k == q.params.get("k", q.params.get("K"))
