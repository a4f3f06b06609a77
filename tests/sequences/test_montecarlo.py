"""Tests of kl_core.sequences.montecarlo: per-sequence values recomputed from the very
sequences drawn, Monte Carlo against the exact moments within 4 standard errors,
reproducibility, and rejected arguments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kl_core.sequences.estimators import SEQUENCE_KEYS, exact_moments
from kl_core.sequences.markov import drift_pair, next_token_kl
from kl_core.sequences.montecarlo import (
    MAX_SAMPLED_TOKENS,
    MAX_SEQUENCES,
    POSITION_KEYS,
    ROUNDING_SPREAD,
    SampleSummary,
    SequenceSample,
    simulate_sequences,
)


def test_values_are_those_of_the_sequences_drawn() -> None:
    # simulate_sequences and MarkovChain.sample read the same stream of uniforms,
    # so the same seed gives the same sequences; recompute every value from them.
    policy, ref = drift_pair(6, 0.8)
    n, length, seed = 500, 9, 4
    s = simulate_sequences(policy, ref, length, n, seed=seed)
    x = policy.sample(np.random.default_rng(seed), n, length)
    a, b = policy.log_first, ref.log_first
    A, B = policy.log_transitions, ref.log_transitions
    logr = np.empty((n, length))
    logr[:, 0] = b[x[:, 0]] - a[x[:, 0]]
    logr[:, 1:] = B[x[:, :-1], x[:, 1:]] - A[x[:, :-1], x[:, 1:]]
    k0, kap = next_token_kl(policy, ref)
    k3 = np.expm1(logr) - logr
    want = {
        "sum_k1": policy.log_prob(x) - ref.log_prob(x),
        "sum_k3": k3.sum(axis=1),
        "seq_k3": np.expm1(logr.sum(axis=1)) - logr.sum(axis=1),
        "sum_k2": 0.5 * (logr**2).sum(axis=1),
        "rb": k0 + kap[x[:, :-1]].sum(axis=1),
        "mean_k3": k3.mean(axis=1),
    }
    assert list(s.values) == list(SEQUENCE_KEYS)
    for key, v in want.items():
        np.testing.assert_allclose(s.values[key], v, rtol=1e-9, atol=1e-12, err_msg=key)
    np.testing.assert_allclose(s.position_mean["k1"], -logr.mean(axis=0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        s.position_se["k3"], k3.std(axis=0, ddof=1) / math.sqrt(n), rtol=1e-9
    )
    assert s.position_mean["rb"][0] == k0 and s.position_se["rb"][0] == 0.0


@pytest.mark.parametrize(
    ("pair", "length"),
    [(drift_pair(8, 0.5), 16), (drift_pair(3, 1.0, "first"), 40), (drift_pair(20, 0.2), 64)],
)
def test_monte_carlo_means_within_4_se_of_exact(pair, length) -> None:
    n = 20_000
    ex = exact_moments(*pair, length)
    s = simulate_sequences(*pair, length, n, seed=11)
    for key in SEQUENCE_KEYS:
        summ = s.summary(key)
        se = ex.std[key] / math.sqrt(n)  # the true standard error
        assert abs(summ.mean - ex.mean[key]) <= 4 * se + 1e-15, key
        assert summ.se == pytest.approx(summ.std / math.sqrt(n))
    # per position: the mean k1 and rb at each position estimate that position's KL
    for key in ("k1", "rb", "k3"):
        z = (s.position_mean[key] - ex.per_position_kl) / np.where(
            s.position_se[key] > 0, s.position_se[key], np.inf
        )
        assert np.all(np.abs(z) < 4.5), key


def test_monte_carlo_variances_within_4_se_of_exact() -> None:
    pair, n, length = drift_pair(5, 0.4), 40_000, 12
    ex = exact_moments(*pair, length)
    s = simulate_sequences(*pair, length, n, seed=12)
    for key in ("sum_k1", "sum_k3", "sum_k2", "rb"):
        v = s.values[key]
        d = v - v.mean()
        var, m4 = np.mean(d**2), np.mean(d**4)
        se_var = math.sqrt((m4 - var**2) / n)  # standard error of the sample variance
        assert abs(s.summary(key).std ** 2 - ex.std[key] ** 2) < 4 * se_var, key


def test_same_seed_same_values_other_seed_other_values() -> None:
    pair = drift_pair(4, 0.3)
    a = simulate_sequences(*pair, 10, 300, seed=1)
    b = simulate_sequences(*pair, 10, 300, seed=1)
    c = simulate_sequences(*pair, 10, 300, seed=2)
    for key in SEQUENCE_KEYS:
        np.testing.assert_array_equal(a.values[key], b.values[key])
    assert not np.array_equal(a.values["sum_k1"], c.values["sum_k1"])
    assert set(a.position_mean) == set(POSITION_KEYS)


def test_checkpoints_summarise_the_prefixes_as_shorter_runs_would() -> None:
    # The first T' tokens of the run are the sequences a run of length T' draws
    # (the same uniforms, position by position): the summaries must agree.
    pair = drift_pair(5, 0.7)
    long = simulate_sequences(*pair, 12, 800, seed=6, checkpoints=[1, 5, 12, 5])
    assert sorted(long.checkpoints) == [1, 5, 12]
    for t in (1, 5, 12):
        short = simulate_sequences(*pair, t, 800, seed=6)
        for key in SEQUENCE_KEYS:
            got, want = long.checkpoints[t][key], short.summary(key)
            assert got.mean == pytest.approx(want.mean, rel=1e-12, abs=1e-15), (t, key)
            assert got.std == pytest.approx(want.std, rel=1e-9, abs=1e-15), (t, key)
    with pytest.raises(ValueError, match=r"checkpoints must be <= length = 12"):
        simulate_sequences(*pair, 12, 10, checkpoints=[13])
    with pytest.raises(ValueError, match=r"checkpoints must be >= 1"):
        simulate_sequences(*pair, 12, 10, checkpoints=[0])


def test_values_equal_to_rounding_have_no_spread() -> None:
    # rb at T = 1 is the first token's KL, the same on every sequence; the counterexample's Σk3 is 1/e on
    # both likely sequences at T = 2.  Their sample std came out 4e-19 and 4.6e-16: the sums' last bits.
    from kl_core.sequences.estimators import RB_COUNTEREXAMPLE

    one = simulate_sequences(*drift_pair(8, 1.0), 1, 500, seed=0)
    rb = one.summary("rb")
    assert np.ptp(one.values["rb"]) <= ROUNDING_SPREAD * np.max(np.abs(one.values["rb"]))
    assert rb.std == 0.0 and rb.se == 0.0 and math.isnan(rb.std_se)
    counter = simulate_sequences(*RB_COUNTEREXAMPLE, 2, 500, seed=0)
    k3 = counter.values["sum_k3"]
    assert np.allclose(k3, math.exp(-1), rtol=1e-14)  # every sequence drawn: 0 + 1/e or 1/e + 0
    assert counter.summary("sum_k3").se == 0.0 and counter.summary("mean_k3").se == 0.0
    # a real spread, however small next to the mean, is kept
    v = np.full(400, 1.0) + np.linspace(-1e-9, 1e-9, 400)
    from kl_core.sequences.montecarlo import _summarise

    assert _summarise(v).std == pytest.approx(float(np.std(v, ddof=1)), rel=1e-12)


def test_single_sequence_has_undefined_spread() -> None:
    s = simulate_sequences(*drift_pair(3, 0.3), 5, 1)
    summ = s.summary("sum_k3")
    assert math.isfinite(summ.mean) and math.isnan(summ.std) and math.isnan(summ.se)
    assert np.all(np.isnan(s.position_se["k1"]))
    with pytest.raises(ValueError, match=r"key must be one of"):
        s.summary("k1")


def test_an_overflowed_value_gives_inf_summaries() -> None:
    # P(R > e^709) <= e^-709 under the policy (E[R] = 1), so sampling never gets
    # there; the summary must still say inf rather than nan if a value is inf.
    s = simulate_sequences(*drift_pair(3, 0.3), 5, 20)
    values = dict(s.values, seq_k3=np.append(s.values["seq_k3"][:-1], np.inf))
    broken = SequenceSample(s.length, s.n, s.seed, values, s.position_mean, s.position_se)
    assert broken.summary("seq_k3") == SampleSummary(math.inf, math.inf, math.inf)
    assert math.isfinite(broken.summary("sum_k1").mean)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 0}, r"n must be >= 1"),
        ({"n": MAX_SEQUENCES + 1}, r"n must be at most MAX_SEQUENCES"),
        ({"n": MAX_SEQUENCES, "length": MAX_SAMPLED_TOKENS // MAX_SEQUENCES + 1}, r"n × length"),
        ({"seed": -3}, r"seed must be an integer >= 0"),
        ({"seed": 1.5}, r"seed must be an integer >= 0"),
        ({"length": 0}, r"length must be >= 1"),
    ],
)
def test_rejects_bad_arguments(kwargs: dict, match: str) -> None:
    args = {"length": 4, "n": 10, "seed": 0} | kwargs
    with pytest.raises(ValueError, match=match):
        simulate_sequences(*drift_pair(3, 0.3), **args)


def test_std_se_is_the_spread_of_the_std_over_repeated_runs() -> None:
    # R independent runs of n sequences: the standard deviation of their R sample
    # stds estimates se(s) with relative standard error 1/sqrt(2(R-1)) ≈ 5% (R = 200);
    # the mean of the R delta-method std_se's must agree within 4 of those.
    pair = drift_pair(5, 0.7)
    runs = [simulate_sequences(*pair, 16, 400, seed=s).summary("sum_k1") for s in range(200)]
    spread = float(np.std([r.std for r in runs], ddof=1))
    claimed = float(np.mean([r.std_se for r in runs]))
    assert claimed == pytest.approx(spread, rel=4 / math.sqrt(2 * 199))
    assert all(r.std_se > 0 for r in runs)
    one = simulate_sequences(*pair, 4, 1).summary("sum_k1")
    assert math.isnan(one.std_se)
