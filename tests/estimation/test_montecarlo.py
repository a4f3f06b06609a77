"""Tests for kl_core.estimation.montecarlo: Monte Carlo figures checked against exact moments.

Every tolerance is a multiple (4) of a standard error computed from the same
run: the mean's SE from the sample standard deviation, the standard
deviation's SE from the sample fourth central moment (delta method), a
proportion's SE from the binomial formula.  Seeds are fixed, so each check is
deterministic; at 4 SE a correct implementation fails one check in ~16 000
seeds.  Schulman's printed table is checked to its printed precision through
the exact columns, and by a moderate-n Monte Carlo run with SE tolerances (the
10-million-sample reproduction lives in benchmarks/bench_table.py).
"""

from __future__ import annotations

import json
import math
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import stats

from kl_core.estimation.distributions import Gaussian, parse
from kl_core.estimation.estimators import ESTIMATORS
from kl_core.estimation.exact import estimator_moments, kl
from kl_core.estimation.montecarlo import (
    QUANTILE_SAMPLE_MIN,
    EstimatorSummary,
    Simulation,
    ratio_to_target,
    simulate,
    target_of,
)
from kl_core.estimation.published import SCHULMAN_2020

Z = 4.0  # tolerances are Z standard errors

# Pairs whose ratio r has finite moments of every order used here (4th moment
# of k3_pq included), so both the mean and the spread checks apply.
FAMILIES = {
    "gaussian": ("normal(0,1)", "normal(0.3,1.1)"),
    "laplace": ("laplace(0,1)", "laplace(0.5,1)"),
    "student_t": ("t(10,0,1)", "t(10,0.5,1)"),
    "mixture": ("mixture(0.5:-1:1,0.5:1:1)", "mixture(0.3:-1:1,0.7:1:1)"),
    "categorical": ("categorical(0,1,2)", "categorical(0.5,0.5,1)"),
}
N = 200_000
LAM = 0.5  # a λ other than 0 and 1, so k_lambda runs its own formula
KEYS = ("k1", "k2", "k3", "k_lambda", "k3_pq")


def _std_se(values: np.ndarray) -> float:
    """Standard error of the sample standard deviation (delta method)."""
    s2 = values.var(ddof=1)
    m4 = np.mean((values - values.mean()) ** 4)
    return math.sqrt(max(m4 - s2 * s2, 0.0) / (4.0 * s2 * values.size))


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family_run(request: pytest.FixtureRequest) -> tuple[str, Simulation]:
    q, p = (parse(s) for s in FAMILIES[request.param])
    # sample_size >= N keeps every value, so tests can recompute from them.
    sim = simulate(q, p, N, seed=20240611, lam=LAM, keys=KEYS, sample_size=N)
    return request.param, sim


# ------------------------------------------------------------ consistency


def test_unbiased_means_within_4_se_of_exact_kl(family_run: tuple[str, Simulation]) -> None:
    family, sim = family_run
    for key in KEYS:
        s = sim[key]
        if ESTIMATORS[key].unbiased_for is None:
            continue
        exact = sim.true_kl_pq if ESTIMATORS[key].unbiased_for == "kl_pq" else sim.true_kl
        assert s.target == exact
        se_all = s.std / math.sqrt(N)
        assert abs(s.mean - exact) <= Z * se_all, (family, key, s.mean, exact, se_all)


def test_biased_k2_mean_within_4_se_of_its_exact_mean(family_run: tuple[str, Simulation]) -> None:
    family, sim = family_run
    s = sim["k2"]
    exact = estimator_moments("k2", sim.q, sim.p).mean
    assert abs(s.mean - exact) <= Z * s.std / math.sqrt(N), family


def test_per_sample_std_within_4_se_of_exact(family_run: tuple[str, Simulation]) -> None:
    family, sim = family_run
    for key in KEYS:
        s = sim[key]
        m = estimator_moments(key, sim.q, sim.p, lam=LAM if key == "k_lambda" else None)
        assert math.isfinite(m.var), (family, key, m.note)
        assert s.samples.size == N  # every value kept
        tol = Z * _std_se(s.samples)
        assert abs(s.std - m.std) <= tol, (family, key, s.std, m.std, tol)


def test_summary_figures_agree_with_the_kept_values(family_run: tuple[str, Simulation]) -> None:
    family, sim = family_run
    for key in KEYS:
        s = sim[key]
        v = s.samples  # all N values, in stream order
        np.testing.assert_allclose(s.mean, v.mean(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(s.std, v.std(ddof=1), rtol=1e-10)
        assert s.se == pytest.approx(s.std / math.sqrt(N), rel=1e-15)
        assert s.neg_fraction == np.count_nonzero(v < 0) / N
        assert s.quantile_count == N
        assert s.p95 == np.percentile(v, 95.0)
        assert s.p99 == np.percentile(v, 99.0)
        assert s.bias_over_true == pytest.approx((s.mean - s.target) / s.target, rel=1e-12)
        assert s.std_over_true == pytest.approx(s.std / s.target, rel=1e-12)
        if ESTIMATORS[key].nonnegative:
            assert s.neg_fraction == 0.0


def test_targets_follow_schulmans_table() -> None:
    sim = simulate("normal(0,1)", "normal(0.5,2)", 1000)
    assert sim.true_kl == kl(sim.q, sim.p)
    assert sim.true_kl_pq == kl(sim.p, sim.q)
    for key in ("k1", "k2", "k3", "k_lambda"):
        assert (sim[key].target_name, sim[key].target) == ("KL[q‖p]", sim.true_kl)
    assert (sim["k3_pq"].target_name, sim["k3_pq"].target) == ("KL[p‖q]", sim.true_kl_pq)
    assert target_of("abs", 1.0, 2.0) == ("KL[q‖p]", 1.0)


def test_k1_negative_fraction_matches_the_normal_cdf() -> None:
    # q = N(0,1), p = N(μ,1): k1 = μ²/2 − μx < 0  ⇔  x > μ/2.
    mu, n = 0.1, 200_000
    sim = simulate(Gaussian(0, 1), Gaussian(mu, 1), n, seed=3, keys=("k1",))
    exact = stats.norm.sf(mu / 2)
    assert abs(sim["k1"].neg_fraction - exact) <= Z * math.sqrt(exact * (1 - exact) / n)


def test_quantiles_from_a_subsample_when_n_is_large() -> None:
    # k1 = μ²/2 − μx is normal, so its quantiles are known exactly.
    mu, n = 0.1, 2 * QUANTILE_SAMPLE_MIN + 500_000
    sim = simulate(Gaussian(0, 1), Gaussian(mu, 1), n, seed=5, keys=("k1",))
    s = sim["k1"]
    stride = n // QUANTILE_SAMPLE_MIN
    assert s.quantile_count == -(-n // stride)
    assert QUANTILE_SAMPLE_MIN <= s.quantile_count < 2 * QUANTILE_SAMPLE_MIN
    for prob, got in ((0.95, s.p95), (0.99, s.p99)):
        z = stats.norm.ppf(prob)
        exact = mu * mu / 2 + mu * z
        # SE of a sample quantile: sqrt(p(1-p)/m) / density at the quantile
        se = math.sqrt(prob * (1 - prob) / s.quantile_count) / (stats.norm.pdf(z) / mu)
        assert abs(got - exact) <= Z * se


# ------------------------------------------------------------ Schulman's tables


@pytest.mark.parametrize("exp", SCHULMAN_2020, ids=lambda e: f"mu={e.p.mu:g}")
def test_published_table_to_printed_precision_exact(exp) -> None:
    assert round(kl(exp.q, exp.p), exp.true_kl.decimals) == exp.true_kl.value
    for row in exp.rows:
        m = estimator_moments(row.estimator, exp.q, exp.p)
        true = kl(exp.q, exp.p)
        bias = ratio_to_target(m.mean - true, true)
        std = ratio_to_target(m.std, true)
        # A printed number is known to half a unit of its last digit; the tiny
        # slack admits the k2 bias 0.0025 lying exactly on the edge of "0.002".
        assert abs(bias - row.bias.value) <= row.bias.rounding + 1e-12, (row, bias)
        assert abs(std - row.std.value) <= row.std.rounding + 1e-12, (row, std)


def test_published_k3_std_closed_form() -> None:
    # Var(k3) = e^{μ²} − 1 − μ² for q = N(0,1), p = N(μ,1): 1.4166 → "1.42", 1.6950 → "1.7" (as printed)
    for mu, printed in ((0.1, "1.42"), (1.0, "1.7")):
        true = mu * mu / 2
        closed = math.sqrt(math.expm1(mu * mu) - mu * mu) / true
        assert f"{closed:.{len(printed.partition('.')[2])}f}" == printed
        m = estimator_moments("k3", Gaussian(0, 1), Gaussian(mu, 1))
        assert m.std / true == pytest.approx(closed, rel=1e-9)


@pytest.mark.parametrize("exp", SCHULMAN_2020, ids=lambda e: f"mu={e.p.mu:g}")
def test_published_table_by_monte_carlo(exp) -> None:
    n = 400_000
    sim = simulate(exp.q, exp.p, n, seed=0, keys=("k1", "k2", "k3"), sample_size=n)
    true = sim.true_kl
    for row in exp.rows:
        s = sim[row.estimator]
        tol_bias = Z * s.se / true + row.bias.rounding
        tol_std = Z * _std_se(s.samples) / true + row.std.rounding
        assert abs(s.bias_over_true - row.bias.value) <= tol_bias, (row, s.bias_over_true)
        assert abs(s.std_over_true - row.std.value) <= tol_std, (row, s.std_over_true)


# ------------------------------------------------------------ running mean and batches


def test_running_mean_ends_at_the_batch_zero_mean() -> None:
    n, points = 50_000, 60
    sim = simulate("laplace(0,1)", "laplace(0.3,1.2)", n, repeats=3, seed=11, running_points=points)
    for s in sim.summaries:
        rn = s.running_n
        assert rn[0] == 1 and rn[-1] == n and len(rn) <= points
        assert np.all(np.diff(rn) > 0)
        assert s.running_mean.shape == s.running_se.shape == rn.shape
        assert s.running_mean[-1] == s.batch_means[0]
        assert math.isnan(s.running_se[0])  # one value has no spread


def test_running_figures_match_the_prefixes_of_batch_zero() -> None:
    n = 30_000
    # chunk_size below n exercises checkpoints that straddle chunk boundaries
    sim = simulate("normal(0,1)", "normal(1,1)", n, seed=2, sample_size=n, chunk_size=4096)
    for s in sim.summaries:
        v = s.samples  # repeats=1 and sample_size=n: batch 0 in order
        for m, mean, se in zip(s.running_n[1:], s.running_mean[1:], s.running_se[1:], strict=True):
            head = v[:m]
            np.testing.assert_allclose(mean, head.mean(), rtol=1e-10, atol=1e-15)
            np.testing.assert_allclose(se, head.std(ddof=1) / math.sqrt(m), rtol=1e-8)
        assert s.running_se[-1] == pytest.approx(s.se, rel=1e-10)  # ≈ std/sqrt(n)


@pytest.mark.parametrize(
    ("n", "repeats", "chunk"), [(1000, 7, 4096), (10_000, 3, 4096), (5000, 2, 5000)]
)
def test_batch_means_are_the_means_of_consecutive_batches(n: int, repeats: int, chunk: int) -> None:
    sim = simulate(
        "t(5,0,1)",
        "t(5,0.2,1)",
        n,
        repeats=repeats,
        seed=4,
        sample_size=n * repeats,
        chunk_size=chunk,
    )
    for s in sim.summaries:
        assert s.batch_means.shape == (repeats,)
        expected = s.samples.reshape(repeats, n).mean(axis=1)
        np.testing.assert_allclose(s.batch_means, expected, rtol=1e-12, atol=1e-15)
        assert s.mean == pytest.approx(s.batch_means.mean(), rel=1e-12, abs=1e-15)
        assert s.se == pytest.approx(s.std / math.sqrt(n), rel=1e-15)


def test_histogram_samples_are_capped() -> None:
    sim = simulate("normal(0,1)", "normal(1,1)", 30_000, repeats=2, seed=1, sample_size=7000)
    for s in sim.summaries:
        assert 0 < s.samples.size <= 7000
        assert not s.samples.flags.writeable


# ------------------------------------------------------------ reproducibility


def _arrays(s: EstimatorSummary) -> list[np.ndarray]:
    return [s.batch_means, s.samples, s.running_n, s.running_mean, s.running_se]


def test_same_seed_same_numbers_different_seed_different() -> None:
    args = ("mixture(0.5:-1:1,0.5:1:1)", "normal(0,1.5)", 20_000)
    a = simulate(*args, repeats=3, seed=9)
    b = simulate(*args, repeats=3, seed=9)
    c = simulate(*args, repeats=3, seed=10)
    for sa, sb, sc in zip(a.summaries, b.summaries, c.summaries, strict=True):
        assert sa.to_row() == sb.to_row()
        for xa, xb in zip(_arrays(sa), _arrays(sb), strict=True):
            np.testing.assert_array_equal(xa, xb)
        assert sa.mean != sc.mean
        assert not np.array_equal(sa.samples, sc.samples)


def test_threads_do_not_change_the_numbers() -> None:
    args = ("normal(0,1)", "normal(0.1,1)", 300_000)
    one = simulate(*args, repeats=2, seed=1, workers=1, chunk_size=2**14)
    two = simulate(*args, repeats=2, seed=1, workers=2, chunk_size=2**14)
    for s1, s2 in zip(one.summaries, two.summaries, strict=True):
        assert s1.to_row() == s2.to_row()
        for x1, x2 in zip(_arrays(s1), _arrays(s2), strict=True):
            np.testing.assert_array_equal(x1, x2)


@pytest.mark.parametrize(
    ("q_spec", "p_spec"),
    [
        ("normal(0,1)", "normal(0.4,1.2)"),
        ("laplace(0,1)", "laplace(0.4,1)"),
        ("t(4,0,1)", "t(4,0.4,1)"),
        ("categorical(0,1,2)", "categorical(1,0,0)"),
    ],
)
def test_chunk_size_changes_only_rounding(q_spec: str, p_spec: str) -> None:
    # these samplers draw the same stream however it is cut
    q, p = parse(q_spec), parse(p_spec)
    runs = [simulate(q, p, 20_000, repeats=2, seed=8, chunk_size=c) for c in (2**16, 4096, 3000)]
    for other in runs[1:]:
        for s0, s1 in zip(runs[0].summaries, other.summaries, strict=True):
            np.testing.assert_allclose(s1.samples, s0.samples, rtol=1e-13, atol=1e-300)
            np.testing.assert_allclose(s1.batch_means, s0.batch_means, rtol=1e-12, atol=1e-15)
            assert s1.mean == pytest.approx(s0.mean, rel=1e-12, abs=1e-15)
            assert s1.std == pytest.approx(s0.std, rel=1e-12)


@pytest.mark.parametrize(("q_spec", "p_spec"), [FAMILIES["gaussian"], FAMILIES["laplace"]])
def test_without_percentiles_every_other_figure_is_the_same(q_spec: str, p_spec: str) -> None:
    # 2.5·10^6 values: more than 2·QUANTILE_SAMPLE_MIN, so the full run keeps a strided subsample
    kwargs = {"n": 500_000, "repeats": 5, "seed": 4, "lam": LAM, "keys": KEYS}
    full = simulate(q_spec, p_spec, **kwargs)
    lean = simulate(q_spec, p_spec, **kwargs, percentiles=False)
    for f, s in zip(full.summaries, lean.summaries, strict=True):
        assert f.quantile_count > 0 and math.isfinite(f.p95)
        assert s.quantile_count == 0 and math.isnan(s.p95) and math.isnan(s.p99)
        rows = [{k: v for k, v in r.to_row().items() if k not in ("p95", "p99")} for r in (f, s)]
        assert rows[0] == rows[1]  # the same operations on the same draws
        for x1, x2 in zip(_arrays(f), _arrays(s), strict=True):
            np.testing.assert_array_equal(x1, x2)


def test_percentiles_off_keeps_no_values() -> None:
    # the full run holds a 1.5·10^6-value quantile subsample (12 MB) at its end
    tracemalloc.start()
    try:
        simulate("normal(0,1)", "normal(0.1,1)", 3_000_000, keys=("k1",), workers=1, percentiles=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8e6


def test_memory_is_bounded_by_the_subsamples_not_by_n() -> None:
    # 3·10^6 values of one estimator: the quantile subsample is 1.5·10^6 values
    # (12 MB); holding all values would take 24 MB per array.
    tracemalloc.start()
    try:
        simulate("normal(0,1)", "normal(0.1,1)", 3_000_000, keys=("k1",), workers=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20e6


# ------------------------------------------------------------ edge cases and validation


def test_p_equal_to_q_gives_nan_ratios_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim = simulate("normal(0,1)", "normal(0,1)", 5000, repeats=2)
    assert sim.true_kl == 0.0
    for s in sim.summaries:
        assert s.mean == 0.0 and s.std == 0.0
        assert math.isnan(s.bias_over_true) and math.isnan(s.std_over_true)


def test_infinite_target_gives_nan_ratios() -> None:
    # KL[Cauchy ‖ N(0,1)] = inf, so k3_pq has nothing finite to be compared with.
    sim = simulate("normal(0,1)", "t(1,0,1)", 5000)
    assert sim.true_kl_pq == math.inf
    assert math.isnan(sim["k3_pq"].bias_over_true)
    assert math.isnan(sim["k3_pq"].std_over_true)
    assert math.isfinite(sim["k3"].bias_over_true)


def test_moment_merging_handles_infinite_values() -> None:
    # Real runs rarely meet an overflowing r, but a chunk with one must not
    # poison the merge with nan: +inf stays +inf, and both signs give nan.
    from kl_core.estimation.montecarlo import _Moments

    acc = _Moments.of(np.array([1.0, 2.0, 3.0]))
    acc.merge(_Moments.of(np.array([4.0, np.inf])))
    assert acc.count == 5 and acc.mean == math.inf and acc.m2 == math.inf
    acc.merge(_Moments.of(np.array([5.0, 6.0])))
    assert acc.mean == math.inf and acc.std == math.inf
    acc.merge(_Moments.of(np.array([-np.inf])))
    assert math.isnan(acc.mean)
    # and the finite path is exact Chan merging
    x = np.random.default_rng(0).standard_normal(1001)
    m = _Moments.of(x[:10])
    m.merge(_Moments.of(x[10:]))
    assert m.mean == pytest.approx(x.mean(), rel=1e-14)
    assert m.std == pytest.approx(x.std(ddof=1), rel=1e-13)


@pytest.mark.parametrize("size", [1e-200, 1e-161, 1e-300, 1e150, 1e200, 1e300])
def test_moments_keep_the_spread_of_values_whose_squares_leave_the_doubles(size: float) -> None:
    # Values near 1e-161 square below the smallest normal double, near 1e200 past the largest:
    # the moments keep a power-of-two scale, so the std is that of x times size, in chunks too.
    from kl_core.estimation.montecarlo import _Moments

    x = np.random.default_rng(1).standard_normal(3000)
    want = float(np.std(x, ddof=1)) * size
    whole = _Moments.of(x * size)
    assert whole.std == pytest.approx(want, rel=1e-12)
    merged = _Moments()
    for part in np.array_split(x * size, 7):
        merged.merge(_Moments.of(part))
    assert merged.std == pytest.approx(want, rel=1e-12)
    assert merged.mean == pytest.approx(float(np.mean(x)) * size, rel=1e-10)


def test_moments_merge_chunks_whose_means_are_far_apart() -> None:
    # Two constant chunks 2e200 apart: all the spread is between the means (delta² overflows).
    from kl_core.estimation.montecarlo import _Moments

    m = _Moments.of(np.full(5, 1e200))
    m.merge(_Moments.of(np.full(5, -1e200)))
    assert m.std == pytest.approx(1e200 * math.sqrt(10 / 9), rel=1e-14)
    tiny = _Moments.of(np.full(4, 3e-170))
    tiny.merge(_Moments.of(np.full(4, 5e-170)))
    assert tiny.std == pytest.approx(1e-170 * math.sqrt(8 / 7), rel=1e-14)


def test_many_chunks_of_large_values_do_not_overflow_their_sum_of_squares() -> None:
    # Each chunk's squares stay below 2^1000 unscaled; their sum over 300 chunks would not.
    from kl_core.estimation.montecarlo import _Moments

    rng = np.random.default_rng(2)
    parts = [rng.standard_normal(1000) * 1e149 for _ in range(300)]
    m = _Moments()
    for part in parts:
        m.merge(_Moments.of(part))
    assert m.std == pytest.approx(float(np.std(np.concatenate(parts) / 1e149, ddof=1)) * 1e149, rel=1e-12)


def test_to_rows_is_plain_and_complete() -> None:
    sim = simulate("normal(0,1)", "normal(1,1)", 2000, keys=("k3", "k1"))
    rows = sim.to_rows()
    assert [r["estimator"] for r in rows] == ["k3", "k1"]
    expected = {
        "estimator", "name", "target_name", "target", "mean", "std", "bias_over_true",
        "std_over_true", "se", "neg_fraction", "p95", "p99", "q", "p", "n", "repeats", "seed", "lam",
    }  # fmt: skip
    for r in rows:
        assert set(r) == expected
        assert all(isinstance(v, (str, int, float)) for v in r.values())
    json.dumps(rows)
    assert sim.keys == ("k3", "k1")
    with pytest.raises(KeyError):
        sim["k2"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 0}, "n must"),
        ({"n": 2.5}, "n must"),
        ({"repeats": 0}, "repeats"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": True}, "seed"),
        ({"lam": float("inf")}, "lam"),
        ({"lam": float("nan")}, "lam"),
        ({"keys": ("k9",)}, "keys"),
        ({"keys": ()}, "keys"),
        ({"keys": ("k1", "k1")}, "keys"),
        ({"sample_size": 0}, "sample_size"),
        ({"running_points": 0}, "running_points"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"workers": 0}, "workers"),
        ({"percentiles": "no"}, "percentiles"),
        ({"p": "categorical(0,1)"}, "p must"),
        ({"q": 3}, "q must"),
        ({"q": "normal(0,-1)"}, "sigma"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs: dict, match: str) -> None:
    args = {"q": "normal(0,1)", "p": "normal(1,1)", "n": 100, **kwargs}
    with pytest.raises(ValueError, match=match):
        simulate(**args)


def test_ratio_to_target() -> None:
    assert ratio_to_target(0.1, 0.005) == pytest.approx(20.0)
    assert math.isnan(ratio_to_target(1.0, 0.0))
    assert math.isnan(ratio_to_target(1.0, math.inf))
    assert math.isnan(ratio_to_target(1.0, math.nan))


def test_no_relative_figure_divides_a_subnormal_target():
    assert math.isnan(ratio_to_target(1e-323, 5e-323)) and ratio_to_target(1e-300, 5e-301) == pytest.approx(2.0)


def test_a_sample_std_whose_squares_underflow_is_computed_and_a_subnormal_one_flagged():
    sim = simulate("normal(1e-100,1)", "normal(0,1)", n=500, keys=("k1", "k2"))
    k2 = sim["k2"]  # k2 ~ 1e-200: its squares underflow, its std does not
    assert k2.samples.size == 500
    assert k2.std == pytest.approx(float(np.std(k2.samples / 1e-200, ddof=1)) * 1e-200, rel=1e-10)
    assert not k2.std_unresolved and not sim["k1"].std_unresolved
    lost = simulate("normal(1e-160,1)", "normal(0,1)", n=500, keys=("k2",))["k2"]  # k2 ~ 1e-320
    assert lost.std < 2.2250738585072014e-308 and lost.std_unresolved
    same = simulate("normal(0,1)", "normal(0,1)", n=500, keys=("k2",))
    assert same["k2"].std == 0.0 and not same["k2"].std_unresolved  # p = q: every value is 0
