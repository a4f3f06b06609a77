"""Tests of kl_core.sequences.estimators: the exact dynamic programmes against brute-force
enumeration of all K^T sequences (K^T <= 1e5), against the closed form of an
i.i.d. chain (computed with mpmath), Var(rb) <= Var(sum_k1) across the drift
family, the counterexample where it fails, overflow of seq_k3, and the report.
"""

from __future__ import annotations

import itertools
import json
import math

import mpmath
import numpy as np
import pytest

from kl_core.cli.main import json_value
from kl_core.sequences.estimators import (
    ADDITIVE_KEYS,
    RB_COUNTEREXAMPLE,
    SEQUENCE_ESTIMATORS,
    SEQUENCE_KEYS,
    exact_curves,
    exact_moments,
    rare_sequences,
    se_shortfall,
    sequence_report,
)
from kl_core.sequences.markov import MarkovChain, drift_pair, parse_markov, per_position_kl


def random_chain(k: int, seed: int, scale: float = 1.0) -> MarkovChain:
    rng = np.random.default_rng(seed)
    return MarkovChain.from_arrays(rng.normal(0, scale, k), rng.normal(0, scale, (k, k)))


def _log_softmax(x: np.ndarray) -> np.ndarray:
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def brute(policy: MarkovChain, ref: MarkovChain, length: int) -> dict[str, tuple[float, float]]:
    """Mean and std of every estimator over all K^T sequences, from the logits alone."""
    k = policy.k
    xs = np.array(list(itertools.product(range(k), repeat=length)))
    assert len(xs) <= 10**5
    a, b = _log_softmax(np.array(policy.first)), _log_softmax(np.array(ref.first))
    A, B = _log_softmax(np.array(policy.transitions)), _log_softmax(np.array(ref.transitions))
    logr = np.empty(xs.shape)
    logr[:, 0] = b[xs[:, 0]] - a[xs[:, 0]]
    logr[:, 1:] = B[xs[:, :-1], xs[:, 1:]] - A[xs[:, :-1], xs[:, 1:]]
    w = np.exp(a[xs[:, 0]] + A[xs[:, :-1], xs[:, 1:]].sum(axis=1))
    P = np.exp(A)
    kl_rows = (P * (A - B)).sum(axis=1)
    rb = (np.exp(a) * (a - b)).sum() + kl_rows[xs[:, :-1]].sum(axis=1)
    k3 = np.expm1(logr) - logr
    big_r = logr.sum(axis=1)
    values = {
        "sum_k1": -logr.sum(axis=1),
        "sum_k3": k3.sum(axis=1),
        "seq_k3": np.expm1(big_r) - big_r,
        "sum_k2": 0.5 * (logr**2).sum(axis=1),
        "rb": rb,
        "mean_k3": k3.sum(axis=1) / length,
    }
    out = {}
    for key, v in values.items():
        m = float(np.sum(w * v))
        out[key] = (m, float(np.sqrt(np.sum(w * (v - m) ** 2))))
    return out


PAIRS = [
    (random_chain(3, 1), random_chain(3, 2), 7),
    (random_chain(4, 3, 1.5), random_chain(4, 4, 1.5), 5),
    (random_chain(2, 5, 3.0), random_chain(2, 6, 3.0), 14),
    (*drift_pair(3, 0.7), 6),
    (*drift_pair(4, 1.5, "first"), 5),
    (*drift_pair(10, 0.3), 4),
    (*drift_pair(2, 0.01), 10),
    (*map(parse_markov, RB_COUNTEREXAMPLE), 2),
]


@pytest.mark.parametrize(("policy", "ref", "length"), PAIRS, ids=range(len(PAIRS)))
def test_exact_moments_match_enumeration(policy, ref, length) -> None:
    ex = exact_moments(policy, ref, length)
    want = brute(policy, ref, length)
    for key in SEQUENCE_KEYS:
        m, s = want[key]
        assert ex.mean[key] == pytest.approx(m, rel=1e-9, abs=1e-13), key
        # Variances to 1e-9 relative, and to 1e-14 absolute: the forward programme adds
        # per-position variances of order 1, so ~1e-16 of them remains where they
        # cancel (the counterexample: 0.25 + 0.25 - 0.5 = 9e-11).
        assert ex.std[key] ** 2 == pytest.approx(s**2, rel=1e-9, abs=1e-14), key
    assert ex.length == length
    assert ex.true_kl == pytest.approx(want["sum_k1"][0], rel=1e-10)
    assert ex.true_kl_reverse == pytest.approx(brute(ref, policy, length)["sum_k1"][0], rel=1e-10)
    np.testing.assert_allclose(ex.per_position_kl, per_position_kl(policy, ref, length), rtol=1e-12)
    np.testing.assert_allclose(
        ex.per_position_kl_reverse, per_position_kl(ref, policy, length), rtol=1e-12
    )


def test_curves_hold_every_length_of_one_pass() -> None:
    policy, ref = random_chain(3, 7), random_chain(3, 8)
    curves = exact_curves(policy, ref, 9)
    assert curves.lengths.tolist() == list(range(1, 10))
    for t in (1, 4, 9):
        want = brute(policy, ref, t)
        for key in SEQUENCE_KEYS:
            assert curves.mean[key][t - 1] == pytest.approx(want[key][0], rel=1e-9, abs=1e-13)
            assert curves.std[key][t - 1] == pytest.approx(want[key][1], rel=1e-7, abs=1e-13)
    np.testing.assert_allclose(np.cumsum(curves.per_position_kl), curves.true_kl, rtol=1e-13)


def test_unbiased_estimators_have_the_kl_as_mean_and_mean_k3_a_tth_of_it() -> None:
    curves = exact_curves(*drift_pair(8, 0.5), 64)
    for key, info in SEQUENCE_ESTIMATORS.items():
        if info.target == "KL":
            np.testing.assert_allclose(curves.mean[key], curves.true_kl, rtol=1e-12)
    np.testing.assert_allclose(curves.mean["mean_k3"], curves.true_kl / curves.lengths, rtol=1e-12)
    np.testing.assert_allclose(curves.std["mean_k3"], curves.std["sum_k3"] / curves.lengths)
    np.testing.assert_allclose(curves.relative_std("mean_k3"), curves.relative_std("sum_k3"))
    assert not SEQUENCE_ESTIMATORS["sum_k2"].unbiased
    assert set(SEQUENCE_ESTIMATORS) == set(SEQUENCE_KEYS)
    assert set(ADDITIVE_KEYS) < set(SEQUENCE_KEYS)


def test_relative_std_divides_by_the_kl_as_schulman_does() -> None:
    curves = exact_curves(*drift_pair(6, 0.4), 20)
    for key in ("sum_k1", "sum_k2", "seq_k3", "rb"):
        np.testing.assert_allclose(curves.relative_std(key), curves.std[key] / curves.true_kl)
    np.testing.assert_allclose(
        curves.relative_std("mean_k3"), curves.std["mean_k3"] * curves.lengths / curves.true_kl
    )
    with pytest.raises(ValueError, match=r"key must be one of"):
        curves.relative_std("k3")


# ---------------------------------------------------------------- i.i.d. closed form


def _iid_chain(logits: np.ndarray) -> MarkovChain:
    return MarkovChain.from_arrays(logits, np.tile(logits, (logits.size, 1)))


@pytest.mark.parametrize(
    ("drift", "length", "rel"),
    [(0.3, 256, 1e-8), (1e-3, 64, 1e-8), (0.05, 1000, 1e-8), (1e-5, 16, 1e-5)],
)
def test_seq_k3_variance_matches_the_closed_form_of_an_iid_chain(
    drift: float, length: int, rel: float
) -> None:
    # Tokens i.i.d.: E[R^2] = (1 + chi2)^T, so
    # Var[seq_k3] = (1 + chi2)^T - 1 + T v - 2 T (KL + KL_rev), v = Var(log r) of one token.
    # The four terms cancel down to ~KL^2: at drift 1e-5 (KL ~ 1e-9) about eps / KL of
    # relative precision is left, hence the looser tolerance there.
    base = np.array([0.0, -0.4, -1.1, 0.3])
    tilt = np.array([1.0, 0.2, -0.5, -1.0])
    policy, ref = _iid_chain(base + drift * tilt), _iid_chain(base)
    mpmath.mp.dps = 60
    lp = [mpmath.mpf(float(x)) for x in base + drift * tilt]
    lq = [mpmath.mpf(float(x)) for x in base]
    zp, zq = mpmath.fsum(mpmath.exp(x) for x in lp), mpmath.fsum(mpmath.exp(x) for x in lq)
    p = [mpmath.exp(x) / zp for x in lp]
    q = [mpmath.exp(x) / zq for x in lq]
    lr = [mpmath.log(qi / pi) for pi, qi in zip(p, q, strict=True)]
    kl = -mpmath.fsum(pi * li for pi, li in zip(p, lr, strict=True))
    kl_rev = mpmath.fsum(qi * li for qi, li in zip(q, lr, strict=True))
    chi2 = mpmath.fsum(qi**2 / pi for pi, qi in zip(p, q, strict=True)) - 1
    v = mpmath.fsum(pi * li**2 for pi, li in zip(p, lr, strict=True)) - kl**2
    var = (1 + chi2) ** length - 1 + length * v - 2 * length * (kl + kl_rev)
    ex = exact_moments(policy, ref, length)
    assert ex.std["seq_k3"] == pytest.approx(float(mpmath.sqrt(var)), rel=rel)
    assert ex.true_kl == pytest.approx(float(length * kl), rel=1e-11)
    assert ex.true_kl_reverse == pytest.approx(float(length * kl_rev), rel=1e-11)
    assert ex.std["sum_k1"] == pytest.approx(float(mpmath.sqrt(length * v)), rel=1e-9)
    assert ex.log_r2 == pytest.approx(float(length * mpmath.log1p(chi2)), rel=1e-11)


#: A pair whose E[R^2] passes e^1419 at T = 50 (each step adds log(1/4 · e^30 + …) ≈ 28.6).
HUGE_PAIR = ("markov(0,-30; 0,-30; 0,-30)", "markov(0,0; 0,0; 0,0)")


def test_seq_k3_std_stays_finite_where_only_its_variance_overflows() -> None:
    """K = 64, drift 3, every transition: from T = 200 E[R^2] exceeds a double, but its square
    root does not; the page printed "seq_k3 ∞" and "a standard error of up to ∞ times the KL"."""
    for k in (8, 64):
        policy, ref = drift_pair(k, 3.0)
        curves = exact_curves(policy, ref, 256)
        assert np.all(np.diff(curves.log_r2) >= 0)  # E[R^2] never falls as T grows
        over = curves.log_r2 > math.log(np.finfo(float).max)
        assert over[-1] and not over[0]
        assert np.all(np.isfinite(curves.std["seq_k3"]))
        assert np.all(np.isfinite(curves.relative_std("seq_k3")))
        with mpmath.workdps(40):
            for i in np.flatnonzero(over)[[0, -1]]:
                var = (mpmath.expm1(mpmath.mpf(curves.log_r2[i])) + mpmath.mpf(curves.std["sum_k1"][i]) ** 2
                       - 2 * (mpmath.mpf(curves.true_kl[i]) + mpmath.mpf(curves.true_kl_reverse[i])))
                assert curves.std["seq_k3"][i] == pytest.approx(float(mpmath.sqrt(var)), rel=1e-12)
        assert np.all(np.diff(np.log(curves.std["seq_k3"][-80:])) > 0)  # no jump where the variance overflows
        rep = sequence_report(policy, ref, 256, exact_only=True)
        assert math.isfinite(rep.row["seq_k3"].exact_std)
        assert any("seq_k3: its std is" in n for n in rep.notes)


def test_seq_k3_std_overflows_to_inf_and_says_so() -> None:
    curves = exact_curves(*HUGE_PAIR, 256)
    over = curves.log_r2 > 2 * math.log(np.finfo(float).max)
    assert over[-1] and not over[0]
    assert np.all(np.isinf(curves.std["seq_k3"][over]))
    assert np.all(np.isfinite(curves.std["seq_k3"][~over]))
    assert np.all(np.isfinite(curves.log_r2))
    for key in ADDITIVE_KEYS:
        assert np.all(np.isfinite(curves.std[key]))
    rep = sequence_report(*HUGE_PAIR, 256, exact_only=True)
    assert rep.row["seq_k3"].exact_std == math.inf
    assert any("seq_k3" in n and "inf" in n for n in rep.notes)


def test_seq_k3_relative_std_grows_exponentially_and_rb_stays_lowest() -> None:
    curves = exact_curves(*drift_pair(8, 0.5), 256)
    rel = {k: curves.relative_std(k) for k in SEQUENCE_KEYS}
    assert rel["seq_k3"][255] > 1e3 * rel["seq_k3"][15]
    for key in ("sum_k1", "sum_k3", "seq_k3", "sum_k2"):
        assert np.all(rel["rb"] <= rel[key])


# ---------------------------------------------------------------- Rao–Blackwell


@pytest.mark.parametrize("placement", ["every", "first"])
@pytest.mark.parametrize("k", [2, 3, 8, 50])
def test_rb_variance_never_exceeds_sum_k1_in_the_drift_family_up_to_drift_5(
    k: int, placement: str
) -> None:
    for drift in (-5.0, -2.0, -0.5, 0.01, 0.3, 1.0, 3.0, 5.0):
        curves = exact_curves(*drift_pair(k, drift, placement), 256)
        assert np.all(curves.std["rb"] ** 2 <= curves.std["sum_k1"] ** 2), drift


def test_a_steep_drift_gives_rb_more_variance_than_sum_k1() -> None:
    # The documented exception (kl_core.sequences.estimators): by ~1% at T = 256, beyond the
    # programme's rounding (~1e-12 here) by far.
    curves = exact_curves(*drift_pair(50, 10.0), 256)
    assert curves.std["rb"][-1] > 1.005 * curves.std["sum_k1"][-1]


def test_rb_counterexample_has_more_variance_than_sum_k1() -> None:
    policy, ref = (parse_markov(s) for s in RB_COUNTEREXAMPLE)
    want = brute(policy, ref, 2)
    assert want["rb"][1] > 0.49 and want["sum_k1"][1] < 1e-4  # by enumeration
    ex = exact_moments(policy, ref, 2)
    assert ex.std["rb"] == pytest.approx(0.5, rel=1e-6)
    assert ex.std["sum_k1"] < 1e-4
    rep = sequence_report(policy, ref, 2, exact_only=True)
    assert rep.variance_ratio["sum_k1"] < 1e-8
    assert any("rb has more variance than sum_k1" in n for n in rep.notes)


def test_rb_is_lower_per_position_even_in_the_counterexample() -> None:
    # Per position, rb_t = E[k1_t | prefix]: the law of total variance holds term by term,
    # also where it fails for the sums.
    length = 4
    for policy, ref in [tuple(map(parse_markov, RB_COUNTEREXAMPLE)), drift_pair(3, 10.0)]:
        xs = np.array(list(itertools.product(range(policy.k), repeat=length)))
        w = np.exp(policy.log_prob(xs))
        A, B = policy.log_transitions, ref.log_transitions
        kap = (np.exp(A) * (A - B)).sum(axis=1)
        for t in range(1, length):
            k1_t = A[xs[:, t - 1], xs[:, t]] - B[xs[:, t - 1], xs[:, t]]
            rb_t = kap[xs[:, t - 1]]
            var_k1 = np.sum(w * k1_t**2) - np.sum(w * k1_t) ** 2
            var_rb = np.sum(w * rb_t**2) - np.sum(w * rb_t) ** 2
            assert var_rb <= var_k1 + 1e-12


def test_identical_chains_give_zeros_and_undefined_ratios() -> None:
    policy, ref = drift_pair(4, 0.0)
    rep = sequence_report(policy, ref, 8, n=50)
    for row in rep.rows:
        assert row.exact_mean == 0.0 and row.exact_std == 0.0
        assert row.mc_mean == 0.0 and row.mc_std == 0.0
    assert math.isnan(rep.variance_ratio["sum_k1"])
    assert np.all(np.isnan(exact_curves(policy, ref, 8).relative_std("rb")))


# ---------------------------------------------------------------- report


def test_report_rows_and_json() -> None:
    policy, ref = drift_pair(5, 0.4)
    rep = sequence_report(policy.spec, ref.spec, 12, n=4000, seed=3)
    assert [r.name for r in rep.rows] == list(SEQUENCE_KEYS)
    data = json.loads(json.dumps(json_value(rep.as_dict()), allow_nan=False))
    assert data["true_kl"] == rep.exact.true_kl
    assert len(data["per_position_kl"]) == 12
    assert data["T"] == 12 and data["K"] == 5 and data["n"] == 4000 and data["seed"] == 3
    assert parse_markov(data["policy"]) == policy
    for row in data["rows"]:
        assert set(row) == {"name", "exact_mean", "exact_std", "mc_mean", "mc_std", "mc_se"}
    # Monte Carlo within 4 standard errors of the exact mean (SE from the exact std)
    for r in rep.rows:
        assert abs(r.mc_mean - r.exact_mean) < 4 * r.exact_std / math.sqrt(4000), r.name
        assert r.mc_se == pytest.approx(r.mc_std / math.sqrt(4000))
    assert rep.variance_ratio["sum_k1"] == pytest.approx(
        (rep.exact.std["sum_k1"] / rep.exact.std["rb"]) ** 2
    )


def test_exact_only_report_has_no_monte_carlo() -> None:
    rep = sequence_report(*drift_pair(3, 0.2), 5, exact_only=True)
    assert rep.n is None and rep.seed is None and rep.sample is None
    assert all(r.mc_mean is None and r.mc_std is None and r.mc_se is None for r in rep.rows)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"length": 0}, r"length must be >= 1"),
        ({"length": 5000}, r"length must be at most MAX_LENGTH"),
        ({"n": 0}, r"n must be >= 1"),
        ({"seed": -1}, r"seed must be an integer >= 0"),
        ({"ref": "markov(0,0; 0,0; 0,0)"}, r"policy has K = 3 tokens but ref has K = 2"),
        ({"ref": "normal(0,1)"}, r"^ref: spec 'normal\(0,1\)' is not of the form markov"),
    ],
)
def test_report_rejects_bad_arguments(args: dict, match: str) -> None:
    policy, ref = drift_pair(3, 0.2)
    kw = {"policy": policy, "ref": ref, "length": 4, "n": 10} | args
    with pytest.raises(ValueError, match=match):
        sequence_report(**kw)


@pytest.mark.parametrize(("k", "drift", "length"), [(2, 2.3, 1), (3, 1.5, 2), (4, 3.0, 3)])
def test_rare_sequences_bounds_hold_on_every_sequence(k, drift, length):
    """Markov's inequality, checked by listing all K^T sequences: those with R > √E[R²] have total
    probability at most p = 1/√E[R²] and carry at least 1 − p of E[R²]."""
    import itertools

    policy, ref = drift_pair(k, drift)
    prob, r = [], []
    for x in itertools.product(range(k), repeat=length):
        lp = policy.log_first[x[0]] + sum(policy.log_transitions[a, b] for a, b in itertools.pairwise(x))
        lr = ref.log_first[x[0]] + sum(ref.log_transitions[a, b] for a, b in itertools.pairwise(x))
        prob.append(math.exp(lp))
        r.append(math.exp(lr - lp))
    prob, r = np.array(prob), np.array(r)
    m = float(np.sum(prob * r * r))
    assert math.log(m) == pytest.approx(float(exact_curves(policy, ref, length).log_r2[-1]), rel=1e-12)
    p, hit = rare_sequences(math.log(m), 1000)
    rare = r > math.sqrt(m)
    assert float(prob[rare].sum()) <= p and float(np.sum((prob * r * r)[rare])) >= (1 - p) * m
    assert hit == pytest.approx(1 - (1 - p) ** 1000, rel=1e-12)


def test_rare_sequences_at_p_equal_q_and_bad_input():
    assert rare_sequences(0.0, 10) == (1.0, 1.0)
    with pytest.raises(ValueError, match="log_r2"):
        rare_sequences(math.nan, 10)
    with pytest.raises(ValueError, match="n"):
        rare_sequences(1.0, 0)


def test_the_seq_k3_note_states_only_what_its_numbers_show():
    """It said "a few rare sequences carry its mean, so its Monte Carlo figures are unreliable at any usual
    n" at K = 2, δ = 2.3, T = 1, where 1,000 draws meet the rare token about 5 times."""
    few = sequence_report(*drift_pair(2, 2.3), 1, n=1000)
    (note,) = [x for x in few.notes if x.startswith("seq_k3: its std is")]
    times = few.row["seq_k3"].exact_std / few.exact.true_kl
    assert note == (f"seq_k3: its std is {times:.3g} times the KL, so a standard error of 10% of the KL takes "
                    f"n ≥ {math.ceil(100 * times * times):,} sequences.")
    far = sequence_report(*drift_pair(8, 3.0), 64, n=1000)
    (note,) = [x for x in far.notes if x.startswith("seq_k3: its std is")]
    p, hit = rare_sequences(far.exact.log_r2, 1000)
    assert f"at most p = {p:.3g} carry at least 1 − p of E[R^2]" in note and f"at most {hit:.3g}, so" in note


def test_a_monte_carlo_se_far_below_the_exact_one_is_marked():
    """Drift 100, T = 64: the sample is one sequence repeated, so each MC SE is rounding (1.6e-16) while the
    exact SE of sum_k3 is 6.3e+41; the table printed those ± SE with no warning."""
    far = sequence_report(*drift_pair(8, 100.0), 64, n=2000)
    flagged = [r.name for r in far.rows if se_shortfall(r, 2000) > 10]
    assert {"sum_k3", "mean_k3"} <= set(flagged)
    assert any(x.startswith(", ".join(flagged) + ": the Monte Carlo SE is more than 10 times below") for x in far.notes)
    # light tails: no row is flagged; each additive sum's MC SE is within 10% of the exact one (the sample
    # std's own relative SE is √((κ − 1)/4n) ≈ 1.6% here), seq_k3's (heavier tailed) 1.47 times below
    near = sequence_report(*drift_pair(8, 0.5), 16, n=2000)
    assert all(abs(se_shortfall(near.row[k], 2000) - 1) < 0.1 for k in ("sum_k1", "sum_k3", "sum_k2", "rb"))
    assert 1 < se_shortfall(near.row["seq_k3"], 2000) < 10
    assert not any("Monte Carlo SE is more than" in x for x in near.notes)


def test_chains_a_hair_apart_keep_their_digits() -> None:
    """An audit: logits 1e-9 apart (markov(1e-9,0; 0,0; 0,0) against a uniform chain) gave Σk3's spread/KL as
    2.2e-7, the rounding of two log-softmaxes, for 6.67e-10 (mpmath); seq_k3's, a difference of terms 1e-19 in
    size for a variance of 1e-57, printed 0.  The log-ratios now come from the logits, and a std lost to
    cancellation is NaN (not resolved), not 0."""
    from kl_core.sequences.estimators import exact_curves

    mpmath.mp.dps = 60
    z = [mpmath.mpf("1e-9"), mpmath.mpf(0)]
    p = [mpmath.exp(x) / mpmath.fsum(mpmath.exp(y) for y in z) for x in z]
    lr = [mpmath.log(mpmath.mpf("0.5") / pi) for pi in p]
    k3 = [mpmath.expm1(li) - li for li in lr]
    kl = mpmath.fsum(pi * ki for pi, ki in zip(p, k3, strict=True))
    sd = mpmath.sqrt(mpmath.fsum(pi * (ki - kl) ** 2 for pi, ki in zip(p, k3, strict=True)))
    c = exact_curves(parse_markov("markov(1e-9,0; 0,0; 0,0)"), parse_markov("markov(0,0; 0,0; 0,0)"), 8)
    assert c.true_kl[-1] == pytest.approx(float(kl), rel=1e-9)  # only the first token differs
    assert c.relative_std("sum_k3")[-1] == pytest.approx(float(sd / kl), rel=1e-6)
    assert np.isnan(c.std["seq_k3"][-1])
