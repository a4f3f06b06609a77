"""Tests of kl_core.sequences.markov: the spec (round trip, one-line errors), the drift family,
the alias sampler, and the sequence KL against brute-force enumeration of all K^T sequences.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from kl_core.estimation.distributions import parse
from kl_core.sequences.markov import (
    MAX_LENGTH,
    MAX_LOGIT_SPREAD,
    MAX_TOKENS,
    PLACEMENTS,
    MarkovChain,
    TokenSampler,
    alias_table,
    bregman_terms,
    check_length,
    check_pair,
    drift_pair,
    next_token_kl,
    parse_markov,
    per_position_kl,
)


def sequence_kl(policy: MarkovChain, ref: MarkovChain, length: int) -> float:
    """The whole-sequence KL: the sum of the per-position KLs (chain rule)."""
    return float(per_position_kl(policy, ref, length).sum())


def random_chain(k: int, seed: int, scale: float = 1.0) -> MarkovChain:
    rng = np.random.default_rng(seed)
    return MarkovChain.from_arrays(rng.normal(0, scale, k), rng.normal(0, scale, (k, k)))


def all_sequences(k: int, length: int) -> np.ndarray:
    return np.array(list(itertools.product(range(k), repeat=length)), dtype=np.int64)


def direct_log_prob(chain: MarkovChain, xs: np.ndarray) -> np.ndarray:
    """log pi(x) from the logits, written out (softmax per row), independent of the class."""
    a = np.asarray(chain.first)
    B = np.asarray(chain.transitions)
    la = a - np.log(np.exp(a).sum())
    lB = B - np.log(np.exp(B).sum(axis=1, keepdims=True))
    out = la[xs[:, 0]]
    for t in range(1, xs.shape[1]):
        out = out + lB[xs[:, t - 1], xs[:, t]]
    return out


# ---------------------------------------------------------------- the spec

CHAINS = [
    MarkovChain((0.0, 0.0), ((0.0, 1.0), (1.0, 0.0))),
    random_chain(3, seed=1),
    random_chain(5, seed=2, scale=3.0),
    MarkovChain.from_arrays([1e-300, -2.5e-7, 299.5], np.full((3, 3), -1.23456e5)),
    *drift_pair(8, 0.5),
    *drift_pair(4, -1.25, "first"),
]


@pytest.mark.parametrize("chain", CHAINS, ids=range(len(CHAINS)))
def test_spec_round_trips(chain: MarkovChain) -> None:
    again = parse_markov(chain.spec)
    assert again == chain
    assert again.spec == chain.spec
    assert chain.spec.startswith("markov(") and chain.spec.count(";") == chain.k


def test_spec_reads_spaces_case_and_exponents() -> None:
    c = parse_markov("  Markov( 1e-1 , -2 ;0,0; +.5,3E0 ) ")
    assert c.first == (0.1, -2.0)
    assert c.transitions == ((0.0, 0.0), (0.5, 3.0))


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("markov(0,0; 0,0)", r"K \+ 1 = 3 rows are needed .* got 2"),
        ("markov(0,0; 0,0; 0,0; 0,0)", r"K \+ 1 = 3 rows are needed .* got 4"),
        ("markov(0,0; 0,0; 0)", r"row 3 \(after token 1\) has 1 numbers, expected K = 2"),
        ("markov(0,0; 0,0,0; 0,0)", r"row 2 \(after token 0\) has 3 numbers, expected K = 2"),
        ("markov(0,inf; 0,0; 0,0)", r"first row: 'inf' is not a finite number"),
        ("markov(0,0; nan,0; 0,0)", r"row 2 \(after token 0\): 'nan' is not a finite number"),
        ("markov(0,0; 0,1e999; 0,0)", r"row 2 \(after token 0\): '1e999' is not a finite number"),
        ("markov(0,x; 0,0; 0,0)", r"first row: 'x' is not a number"),
        ("markov(0,0; ; 0,0)", r"row 2 \(after token 0\) is empty"),
        ("markov(0,,0; 0,0,0; 0,0,0; 0,0,0)", r"'' is not a number"),
        ("markov()", r"first row is empty"),
        ("categorical(0,0)", r"is not of the form markov\("),
        ("markov(0,0; 0,0; 0,0", r"missing closing bracket '\)'"),
        ("markov(0,301; 0,0; 0,0)", r"first: logits spread over 301"),
        ("markov(0,0; 0,0; -400,0)", r"transitions\[1\] \(after token 1\): logits spread over 400"),
    ],
)
def test_bad_specs_give_one_line(spec: str, match: str) -> None:
    with pytest.raises(ValueError, match=match) as info:
        parse_markov(spec)
    assert "\n" not in str(info.value)


def test_too_many_tokens_and_long_specs_are_shortened_in_messages() -> None:
    k = MAX_TOKENS + 1
    row = ",".join(["0"] * k)
    spec = "markov(" + "; ".join([row] * (k + 1)) + ")"
    with pytest.raises(ValueError, match=rf"at most MAX_TOKENS = {MAX_TOKENS}") as info:
        parse_markov(spec)
    assert len(str(info.value)) < 200


def test_not_a_string() -> None:
    with pytest.raises(ValueError, match="spec must be a string"):
        parse_markov(3)  # type: ignore[arg-type]


def test_one_dimensional_parse_refuses_markov_with_a_pointer() -> None:
    with pytest.raises(ValueError, match=r"sequence model.*python -m kl_core sequence"):
        parse("markov(0,0; 0,0; 0,0)")


def test_constructor_checks_shapes() -> None:
    with pytest.raises(ValueError, match=r"transitions has 1 rows, expected K = 2"):
        MarkovChain((0.0, 0.0), ((0.0, 0.0),))
    with pytest.raises(ValueError, match=r"transitions\[1\] \(after token 1\) has 1 logits"):
        MarkovChain((0.0, 0.0), ((0.0, 0.0), (0.0,)))
    with pytest.raises(ValueError, match=r"transitions\[0\] \(after token 0\) must be finite"):
        MarkovChain((0.0, 0.0), ((0.0, math.inf), (0.0, 0.0)))
    with pytest.raises(ValueError, match=r"first must hold at least one"):
        MarkovChain((), ())
    with pytest.raises(ValueError, match=r"transitions must be a K×K array"):
        MarkovChain.from_arrays([0.0], [0.0])
    # the largest accepted spread still gives finite, positive probabilities
    c = MarkovChain((0.0, -MAX_LOGIT_SPREAD), ((0.0, -MAX_LOGIT_SPREAD), (0.0, 0.0)))
    assert np.all(c.first_probs > 0) and np.isfinite(c.log_transitions).all()


# ---------------------------------------------------------------- probabilities


@pytest.mark.parametrize(("k", "length"), [(2, 9), (3, 5), (5, 4)])
def test_log_prob_and_marginals_match_enumeration(k: int, length: int) -> None:
    chain = random_chain(k, seed=k)
    xs = all_sequences(k, length)
    lp = chain.log_prob(xs)
    np.testing.assert_allclose(lp, direct_log_prob(chain, xs), rtol=1e-12, atol=1e-12)
    w = np.exp(lp)
    assert w.sum() == pytest.approx(1.0, rel=1e-12)
    marg = chain.marginals(length)
    for t in range(length):
        np.testing.assert_allclose(
            marg[t], np.bincount(xs[:, t], weights=w, minlength=k), rtol=1e-11, atol=1e-15
        )


def test_log_prob_rejects_bad_tokens() -> None:
    chain = random_chain(3, seed=0)
    with pytest.raises(ValueError, match=r"token ids in 0 … 2"):
        chain.log_prob([[0, 3]])
    with pytest.raises(ValueError, match=r"2-D array"):
        chain.log_prob([0, 1])
    with pytest.raises(ValueError, match=r"integer token ids"):
        chain.log_prob([[0.5, 1.0]])


# ---------------------------------------------------------------- exact KL


def brute_kl(p: MarkovChain, q: MarkovChain, length: int) -> float:
    xs = all_sequences(p.k, length)
    lp, lq = direct_log_prob(p, xs), direct_log_prob(q, xs)
    return float(np.sum(np.exp(lp) * (lp - lq)))


PAIRS = [
    (random_chain(3, 10), random_chain(3, 11), 6),
    (random_chain(4, 12, 2.0), random_chain(4, 13, 2.0), 5),
    (*drift_pair(2, 1.5), 12),
    (*drift_pair(5, 0.7, "first"), 4),
]


@pytest.mark.parametrize(("policy", "ref", "length"), PAIRS, ids=range(len(PAIRS)))
def test_sequence_kl_matches_enumeration_in_both_directions(policy, ref, length) -> None:
    assert len(all_sequences(policy.k, length)) <= 10**5
    assert sequence_kl(policy, ref, length) == pytest.approx(
        brute_kl(policy, ref, length), rel=1e-10
    )
    assert sequence_kl(ref, policy, length) == pytest.approx(
        brute_kl(ref, policy, length), rel=1e-10
    )
    per_pos = per_position_kl(policy, ref, length)
    assert per_pos.shape == (length,) and np.all(per_pos >= 0)
    # the chain rule, position by position: KL of prefixes of length t
    for t in range(1, length + 1):
        assert per_pos[:t].sum() == pytest.approx(brute_kl(policy, ref, t), rel=1e-10)


def test_next_token_kl_is_the_categorical_kl() -> None:
    p, q = random_chain(6, 20, 2.0), random_chain(6, 21, 2.0)
    k0, kap = next_token_kl(p, q)
    pa, qa = p.first_probs, q.first_probs
    assert k0 == pytest.approx(np.sum(pa * np.log(pa / qa)), rel=1e-12)
    P, Q = p.transition_probs, q.transition_probs
    np.testing.assert_allclose(kap, np.sum(P * np.log(P / Q), axis=1), rtol=1e-12)


def test_bregman_terms_keep_precision_and_never_overflow() -> None:
    # nearly equal rows: KL ~ d^2, no cancellation
    lq = np.log(np.array([0.2, 0.3, 0.5]))
    d = 1e-7 * np.array([1.0, -2.0, 0.8])
    lp = lq + d
    lp -= np.log(np.exp(lp).sum())
    lr = lp - lq
    q = np.exp(lq)
    want = np.sum(q * (lr**2 / 2 + lr**3 / 6 + lr**4 / 24))  # series of q k3, exact to ~1e-28
    assert bregman_terms(lq, lp).sum() == pytest.approx(want, rel=1e-9)
    # the largest spread: ratios up to e^300 stay finite
    big = bregman_terms(np.array([-1e-130, -300.0]), np.array([-300.0, -1e-130]))
    assert np.all(np.isfinite(big)) and np.all(big >= 0)


def test_identical_chains_have_zero_kl() -> None:
    p, q = drift_pair(6, 0.0)
    assert p == q
    assert sequence_kl(p, q, 50) == 0.0


def test_check_pair_and_length() -> None:
    p, q = drift_pair(3, 0.2)
    assert check_pair(p.spec, q.spec) == (p, q)
    with pytest.raises(ValueError, match=r"policy has K = 3 tokens but ref has K = 2"):
        check_pair(p, drift_pair(2, 0.2)[1])
    with pytest.raises(ValueError, match=r"^ref: spec"):
        check_pair(p, "markov(0,0; 0,0)")
    with pytest.raises(ValueError, match=r"policy must be a MarkovChain or a markov"):
        check_pair(1.0, q)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"length must be >= 1"):
        check_length(0)
    with pytest.raises(ValueError, match=r"length must be at most MAX_LENGTH"):
        check_length(MAX_LENGTH + 1)
    with pytest.raises(ValueError, match=r"length must be a positive integer"):
        check_length(2.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------- drift family


def test_drift_family_is_a_reward_tilt() -> None:
    policy, ref = drift_pair(5, 0.8)
    v = 1 - 2 * np.arange(5) / 4
    tilt = ref.transition_probs * np.exp(0.8 * v)
    np.testing.assert_allclose(
        policy.transition_probs, tilt / tilt.sum(axis=1, keepdims=True), rtol=1e-12
    )
    tilt0 = ref.first_probs * np.exp(0.8 * v)
    np.testing.assert_allclose(policy.first_probs, tilt0 / tilt0.sum(), rtol=1e-12)
    # the reference: Zipf on the first token, Zipf on the cyclic successor
    np.testing.assert_allclose(ref.first_probs, (1 / np.arange(1, 6)) / np.sum(1 / np.arange(1, 6)))
    assert ref.transition_probs[2, 2] == ref.transition_probs.max()


def test_drift_placement_first_keeps_the_kl_constant_in_length() -> None:
    policy, ref = drift_pair(6, 1.0, "first")
    assert policy.transitions == ref.transitions
    kl = [sequence_kl(policy, ref, t) for t in (1, 7, 40)]
    assert kl[0] > 0 and kl == pytest.approx([kl[0]] * 3, rel=1e-13)
    policy, ref = drift_pair(6, 1.0, "every")
    assert sequence_kl(policy, ref, 40) > 10 * sequence_kl(policy, ref, 1)
    assert set(PLACEMENTS) == {"every", "first"}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 1}, r"k must be in 2 …"),
        ({"k": MAX_TOKENS + 1}, r"k must be in 2 …"),
        ({"drift": math.nan}, r"drift must be finite"),
        ({"drift": 101.0}, r"drift must be within ±100"),
        ({"placement": "last"}, r"placement must be one of \['every', 'first'\]"),
    ],
)
def test_drift_family_rejects_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        drift_pair(**kwargs)


# ---------------------------------------------------------------- sampling


@pytest.mark.parametrize("seed", range(5))
def test_alias_tables_give_back_the_distribution_exactly(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 60))
    p = rng.dirichlet(np.full(k, 0.3))
    p[0] += 1e-12  # and a few tiny probabilities
    p /= p.sum()
    accept, alias = alias_table(p)
    implied = accept.copy()
    np.add.at(implied, alias, 1.0 - accept)
    np.testing.assert_allclose(implied / k, p, rtol=0, atol=1e-15)
    assert np.all((accept >= 0) & (accept <= 1 + 1e-12))


def test_sampler_frequencies_within_4_se() -> None:
    chain = random_chain(5, seed=30)
    s = TokenSampler(chain)
    rng = np.random.default_rng(31)
    n = 200_000
    first = np.bincount(s.first(rng.random(n)), minlength=5) / n
    p = chain.first_probs
    assert np.all(np.abs(first - p) < 4 * np.sqrt(p * (1 - p) / n))
    prev = np.full(n, 3)
    nxt = np.bincount(s.next(prev, rng.random(n)), minlength=5) / n
    p = chain.transition_probs[3]
    assert np.all(np.abs(nxt - p) < 4 * np.sqrt(p * (1 - p) / n))


def test_sample_estimates_the_kl_within_4_se() -> None:
    policy, ref = drift_pair(4, 0.6)
    x = policy.sample(np.random.default_rng(5), 40_000, 10)
    assert x.shape == (40_000, 10) and x.dtype == np.int64
    k1 = policy.log_prob(x) - ref.log_prob(x)
    se = k1.std(ddof=1) / math.sqrt(k1.size)
    assert abs(k1.mean() - sequence_kl(policy, ref, 10)) < 4 * se
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        policy.sample(0, 3, 3)  # type: ignore[arg-type]
