"""Tests of kl_core.audit.statistics: every figure against direct numpy, the example file
against its exact KL, the rollout correction against exact categorical KLs, and
every rejected input.

Statistical checks use a fixed seed and a 4-standard-error band, where the
standard error is the one the audit reports (for importance-weighted figures
the delta-method SE of the self-normalised estimator, see kl_core.audit.statistics).
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from kl_core.audit import statistics as audit_mod
from kl_core.audit.statistics import (
    DEFINITIONS,
    DIRECTIONS,
    MAX_POSITION_BUCKETS,
    audit,
    load_table,
    position_bucket,
)
from kl_core.numbers import from_log

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CSV = ROOT / "data" / "example_audit.csv"
EXAMPLE_JSON = ROOT / "data" / "example_audit.json"


def _logps(n: int, seed: int = 0, spread: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ls = -rng.exponential(2.0, n)
    lo = np.minimum(ls + rng.normal(0.0, spread, n), 0.0)
    return ls, lo


def _direct_values(direction: str, ls: np.ndarray, lo: np.ndarray) -> dict[str, np.ndarray]:
    """The per-token formulas written out in numpy (independent of kl_core)."""
    t = lo - ls
    r = np.exp(t)
    if direction == "sampler-other":
        return {"k1": -t, "k2": 0.5 * t**2, "k3": (r - 1) - t}
    return {"k1": r * t, "k2": 0.5 * r * t**2, "k3": r * t - (r - 1)}


# ---------------------------------------------------------------- figures


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_unweighted_figures_match_numpy(direction: str) -> None:
    ls, lo = _logps(3001, seed=1)
    rep = audit(ls, lo, direction=direction)
    assert rep.n == rep.n_total == 3001
    assert rep.direction == direction
    assert not rep.weighted and rep.ess is None and rep.weights is None
    for key, v in _direct_values(direction, ls, lo).items():
        s = rep.summaries[key]
        np.testing.assert_allclose(rep.values[key], v, rtol=1e-12, atol=1e-15)
        assert s.mean == pytest.approx(np.mean(v), rel=1e-12)
        assert s.std == pytest.approx(np.std(v, ddof=1), rel=1e-10)
        assert s.se == pytest.approx(np.std(v, ddof=1) / math.sqrt(v.size), rel=1e-10)
        assert s.neg_fraction == np.mean(v < 0)
        assert s.p95 == pytest.approx(np.quantile(v, 0.95, method="inverted_cdf"), rel=1e-12)
        assert s.p99 == pytest.approx(np.quantile(v, 0.99, method="inverted_cdf"), rel=1e-12)
        assert s.max == pytest.approx(np.max(v), rel=1e-12)
    # Only k1 can be negative; k2 and k3 never are.
    assert rep.k1.neg_fraction > 0.2
    assert rep.k2.neg_fraction == rep.k3.neg_fraction == 0.0


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_weighted_figures_match_numpy(direction: str) -> None:
    ls, lo = _logps(2000, seed=2)
    rng = np.random.default_rng(3)
    lr = np.minimum(ls + rng.normal(0.0, 0.3, ls.size), 0.0)
    rep = audit(ls, lo, direction=direction, logp_rollout=lr)
    w = np.exp(ls - lr)
    n = w.size
    assert rep.weighted
    assert rep.ess == pytest.approx(w.sum() ** 2 / (w**2).sum(), rel=1e-12)
    assert rep.ess_fraction == pytest.approx(rep.ess / n, rel=1e-12)
    np.testing.assert_allclose(rep.weights, w / w.max(), rtol=1e-12)
    for key, v in _direct_values(direction, ls, lo).items():
        s = rep.summaries[key]
        m = np.average(v, weights=w)
        assert s.mean == pytest.approx(m, rel=1e-10)
        v1, v2 = w.sum(), (w**2).sum()
        assert s.std == pytest.approx(np.sqrt((w * (v - m) ** 2).sum() / (v1 - v2 / v1)), rel=1e-8)
        se = np.sqrt(n / (n - 1) * (w**2 * (v - m) ** 2).sum()) / w.sum()
        assert s.se == pytest.approx(se, rel=1e-8)
        assert s.neg_fraction == pytest.approx(w[v < 0].sum() / w.sum(), rel=1e-12, abs=0)
        order = np.argsort(v)
        cdf = np.cumsum(w[order]) / w.sum()
        for q, got in ((0.95, s.p95), (0.99, s.p99)):
            assert got == pytest.approx(v[order][np.argmax(cdf >= q)], rel=1e-12)
        assert s.max == pytest.approx(v.max(), rel=1e-12)


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_unit_weights_reproduce_the_unweighted_audit(direction: str) -> None:
    ls, lo = _logps(777, seed=4)
    plain = audit(ls, lo, direction=direction)
    same = audit(ls, lo, direction=direction, logp_rollout=ls)
    assert same.ess == 777.0  # (sum w)^2 / sum w^2 with every w = 1, exactly
    assert same.ess_fraction == 1.0
    for key in ("k1", "k2", "k3"):
        a, b = plain.summaries[key], same.summaries[key]
        for f in ("mean", "std", "se", "neg_fraction", "p95", "p99", "max"):
            assert getattr(b, f) == pytest.approx(getattr(a, f), rel=1e-12, abs=1e-15), (key, f)


def test_mask_equals_subsetting() -> None:
    ls, lo = _logps(500, seed=5)
    keep = np.random.default_rng(6).random(500) < 0.6
    masked = audit(ls, lo, mask=keep.astype(int))
    subset = audit(ls[keep], lo[keep])
    assert masked.n == keep.sum() and masked.n_total == 500
    assert masked.k3 == subset.k3 and masked.k1 == subset.k1


def test_other_sampler_k3_is_k3_pq_and_differs_from_k1_by_the_control_variate() -> None:
    from kl_core.estimation.estimators import k3_pq

    ls, lo = _logps(300, seed=7)
    rep = audit(ls, lo, direction="other-sampler")
    t = lo - ls
    np.testing.assert_allclose(rep.values["k3"], k3_pq(t), rtol=1e-14)
    np.testing.assert_allclose(
        rep.values["k1"] - rep.values["k3"], np.expm1(t), rtol=1e-9, atol=1e-15
    )


def test_mirrored_k2_agrees_with_k3_pq_to_second_order() -> None:
    # Documented Taylor expansion: r t^2 / 2 - [r log r - (r - 1)] = t^3 / 6 + O(t^4).
    t = np.array([1e-3, -1e-3, 2e-3])
    rep = audit(np.full(3, -1.0), -1.0 + t, direction="other-sampler")
    diff = rep.values["k2"] - rep.values["k3"]
    np.testing.assert_allclose(diff / t**3, 1 / 6, rtol=2e-2)


def test_position_buckets_are_log2_and_match_groupby() -> None:
    assert position_bucket([0, 1, 2, 3, 4, 7, 8, 2**17, 2**18, 10**9]).tolist() == [
        0, 1, 2, 2, 3, 3, 4, 18, 19, 19,
    ]  # fmt: skip
    ls, lo = _logps(4000, seed=8)
    pos = np.random.default_rng(9).integers(0, 300, 4000)
    rep = audit(ls, lo, positions=pos)
    assert rep.positions is not None and len(rep.positions) <= MAX_POSITION_BUCKETS
    df = pd.DataFrame({"b": position_bucket(pos), "k3": -(lo - ls) + np.expm1(lo - ls)})
    g = df.groupby("b")["k3"]
    assert [b.count for b in rep.positions] == g.size().tolist()
    for row, (bi, grp) in zip(rep.positions, g, strict=True):
        assert row.lo == (0 if bi == 0 else 2 ** (bi - 1))
        assert row.hi == 2**bi
        assert row.lo <= pos[position_bucket(pos) == bi].min()
        assert row.mean["k3"] == pytest.approx(grp.mean(), rel=1e-10)
        assert row.se["k3"] == pytest.approx(grp.std(ddof=1) / math.sqrt(len(grp)), rel=1e-8)
    last = audit([-1.0, -1.0], [-1.1, -1.2], positions=[5, 2**20]).positions
    assert last[-1].lo == 2**18 and last[-1].hi is None
    assert last[-1].to_dict()["hi"] == "inf"


def test_sequence_sums_match_groupby() -> None:
    ls, lo = _logps(1200, seed=10)
    rng = np.random.default_rng(11)
    ids = rng.choice(["a", "b", "c", "d", "e", "f", "g"], 1200)
    keep = rng.random(1200) < 0.8
    rep = audit(ls, lo, sequence_ids=ids, mask=keep)
    seq = rep.sequences
    assert seq is not None and seq.ess is None
    vals = _direct_values("sampler-other", ls, lo)
    df = pd.DataFrame({"id": ids, **vals})[keep]
    sums = df.groupby("id")[["k1", "k2", "k3"]].sum()
    assert seq.n_sequences == len(sums) == 7
    assert seq.ids.tolist() == sums.index.tolist()
    assert seq.tokens.tolist() == df.groupby("id").size().tolist()
    for key in ("k1", "k2", "k3"):
        np.testing.assert_allclose(seq.sums[key], sums[key].to_numpy(), rtol=1e-10)
        s = sums[key].to_numpy()
        assert seq.stats[key].mean == pytest.approx(s.mean(), rel=1e-10)
        assert seq.stats[key].std == pytest.approx(s.std(ddof=1), rel=1e-10)
        assert seq.stats[key].se == pytest.approx(s.std(ddof=1) / math.sqrt(7), rel=1e-10)


def test_sequence_weights_are_products_of_token_weights() -> None:
    ls, lo = _logps(600, seed=12)
    lr = np.minimum(ls + np.random.default_rng(13).normal(0, 0.1, 600), 0.0)
    ids = np.repeat(np.arange(30), 20)
    seq = audit(ls, lo, sequence_ids=ids, logp_rollout=lr).sequences
    logW = np.bincount(ids, weights=ls - lr)
    W = np.exp(logW - logW.max())
    assert seq.ess == pytest.approx(W.sum() ** 2 / (W**2).sum(), rel=1e-10)
    assert seq.stats["k3"].mean == pytest.approx(np.average(seq.sums["k3"], weights=W), rel=1e-10)


def test_to_dict_has_the_cli_contract_and_is_strict_json() -> None:
    ls, lo = _logps(200, seed=14)
    rep = audit(ls, lo, positions=np.arange(200), sequence_ids=np.arange(200) // 50)
    d = rep.to_dict(per_sequence=True)
    assert {"n", "direction", "k1", "k2", "k3"} <= d.keys()
    assert d["n"] == 200 and d["direction"] == "sampler-other"
    for key in ("k1", "k2", "k3"):
        assert {"mean", "std", "se", "neg_fraction"} <= d[key].keys()
        assert all(isinstance(v, float) for v in d[key].values())
    assert d["definitions"] == DEFINITIONS["sampler-other"]
    assert len(d["sequences"]["sums"]["k3"]) == 4
    json.dumps(d, allow_nan=False)


def test_to_dict_writes_a_figure_past_a_double_as_a_string_and_its_log_and_undefined_as_null() -> None:
    # logr = 800: r log r = 800 e^800 is past a double, but finite: not "inf".
    rep = audit([-800.0, -1.0], [0.0, -1.0], direction="other-sampler")
    d = rep.to_dict()
    log_max = 800.0 + math.log(800.0)
    assert rep.k1.mean == math.inf and rep.k1.log_mean == pytest.approx(log_max - math.log(2), rel=1e-14)
    assert d["k1"]["max"] == from_log(log_max, 12) and d["k1"]["log_max"] == pytest.approx(log_max, rel=1e-14)
    assert isinstance(d["k1"]["mean"], str) and float(d["k1"]["log_mean"]) == rep.k1.log_mean
    assert "inf" not in json.dumps(d)
    one = audit([-1.0], [-2.0]).to_dict()
    assert one["k1"]["std"] is None and one["k1"]["se"] is None and one["k1"]["mean"] == 1.0
    json.dumps(d, allow_nan=False)
    json.dumps(one, allow_nan=False)


# ---------------------------------------------------------------- the example file


@pytest.fixture(scope="module")
def example() -> tuple[audit_mod.AuditTable, dict]:
    meta = json.loads(EXAMPLE_JSON.read_text())
    return load_table(EXAMPLE_CSV, **meta["audit_args"]), meta


def test_example_file_is_small_and_described(example) -> None:
    table, meta = example
    assert EXAMPLE_CSV.stat().st_size < 1_000_000
    assert table.n_rows == meta["n_rows"]
    assert int(table.mask.sum()) == meta["n_counted"]


def test_example_sampler_other_means_match_exact_kl(example) -> None:
    table, meta = example
    ex = meta["exact"]
    rep = audit(**table.as_kwargs(), direction="sampler-other")
    kl = ex["kl_sampler_other_per_token"]
    assert abs(rep.k1.mean - kl) < 4 * rep.k1.se
    assert abs(rep.k3.mean - kl) < 4 * rep.k3.se
    assert abs(rep.k2.mean - ex["k2_sampler_other_per_token"]) < 4 * rep.k2.se
    seq = rep.sequences.stats["k3"]
    assert abs(seq.mean - ex["kl_sampler_other_per_sequence"]) < 4 * seq.se
    # k3's error bar is much narrower than k1's: the point of the control variate.
    assert rep.k3.se < rep.k1.se / 4


def test_example_other_sampler_means_match_exact_kl(example) -> None:
    table, meta = example
    ex = meta["exact"]
    rep = audit(**table.as_kwargs(), direction="other-sampler")
    kl = ex["kl_other_sampler_per_token"]
    assert abs(rep.k3.mean - kl) < 4 * rep.k3.se  # k3 here is k3_pq
    assert abs(rep.k1.mean - kl) < 4 * rep.k1.se
    assert abs(rep.k2.mean - ex["k2_other_sampler_per_token"]) < 4 * rep.k2.se
    seq = rep.sequences.stats["k3"]
    assert abs(seq.mean - ex["kl_other_sampler_per_sequence"]) < 4 * seq.se


def test_example_per_position_buckets_follow_the_exact_curve(example) -> None:
    table, meta = example
    exact = np.asarray(meta["exact"]["per_position"]["kl_sampler_other"])
    rep = audit(**table.as_kwargs())
    pos = table.positions[table.mask]
    for b in rep.positions:
        sel = (pos >= b.lo) & (pos < (b.hi or np.inf))
        target = exact[pos[sel]].mean()
        assert abs(b.mean["k3"] - target) < 4 * b.se["k3"], (b.lo, b.hi)


def test_example_script_is_deterministic(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_example_audit", ROOT / "scripts" / "make_example_audit.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    csv_path, json_path = mod.write_example(tmp_path)
    # Floats differ in the last digit across CPUs and BLAS builds: compare numbers
    # with a tolerance, and everything else (ids, tokens, masks, keys) exactly.
    fresh, bundled = pd.read_csv(csv_path), pd.read_csv(EXAMPLE_CSV)
    assert list(fresh.columns) == list(bundled.columns)
    assert fresh.shape == bundled.shape
    for col in fresh.columns:
        if pd.api.types.is_float_dtype(bundled[col]):
            np.testing.assert_allclose(fresh[col], bundled[col], rtol=1e-8, atol=1e-12)
        else:
            assert fresh[col].tolist() == bundled[col].tolist(), col
    _assert_tree_close(json.loads(json_path.read_text()), json.loads(EXAMPLE_JSON.read_text()))


def _assert_tree_close(got, want, where: str = "$") -> None:
    """``got == want`` for JSON trees, with floats compared to 1e-9 relative."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            _assert_tree_close(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _assert_tree_close(g, w, f"{where}[{i}]")
    elif isinstance(want, float) or isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-15), (where, got, want)
    else:
        assert got == want, (where, got, want)


def test_tree_comparison_catches_a_changed_number() -> None:
    _assert_tree_close({"a": [1.0, 2.0]}, {"a": [1.0, 2.0 + 1e-13]})
    with pytest.raises(AssertionError):
        _assert_tree_close({"a": [1.0, 2.0]}, {"a": [1.0, 2.0001]})
    with pytest.raises(AssertionError):
        _assert_tree_close({"a": [1.0]}, {"b": [1.0]})


# ---------------------------------------------------------------- rollout correction


def _three_policies(vocab: int = 20, seed: int = 21):
    rng = np.random.default_rng(seed)
    base = rng.normal(0.0, 1.0, vocab)
    sampler = special.log_softmax(base)
    other = special.log_softmax(base + rng.normal(0.0, 0.5, vocab))
    rollout = special.log_softmax(base + rng.normal(0.0, 0.4, vocab))
    return sampler, other, rollout


def _kl(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sum(np.exp(a) * (a - b)))


def _draw(rollout: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(rollout.size, size=n, p=np.exp(rollout))


def test_rollout_weighted_means_match_exact_kl() -> None:
    s, o, r = _three_policies()
    x = _draw(r, 20_000, np.random.default_rng(22))
    fwd = audit(s[x], o[x], logp_rollout=r[x])
    rev = audit(s[x], o[x], logp_rollout=r[x], direction="other-sampler")
    assert 0.3 < fwd.ess_fraction < 1.0
    assert abs(fwd.k3.mean - _kl(s, o)) < 4 * fwd.k3.se
    assert abs(fwd.k1.mean - _kl(s, o)) < 4 * fwd.k1.se
    assert abs(rev.k3.mean - _kl(o, s)) < 4 * rev.k3.se
    # Without the correction the same tokens estimate KL[rollout||other] instead.
    naive = audit(r[x], o[x])
    assert abs(naive.k3.mean - _kl(r, o)) < 4 * naive.k3.se
    assert abs(naive.k3.mean - _kl(s, o)) > 4 * naive.k3.se


def test_rollout_standard_error_is_calibrated() -> None:
    # Over many independent batches the delta-method SE should match the spread
    # of the weighted means, and mean ± 2 SE should cover the exact KL ~95%.
    s, o, r = _three_policies()
    truth = _kl(s, o)
    rng = np.random.default_rng(23)
    means, ses = [], []
    for _ in range(300):
        x = _draw(r, 1000, rng)
        rep = audit(s[x], o[x], logp_rollout=r[x])
        means.append(rep.k3.mean)
        ses.append(rep.k3.se)
    means, ses = np.asarray(means), np.asarray(ses)
    coverage = np.mean(np.abs(means - truth) < 2 * ses)
    assert 0.90 < coverage < 0.99
    assert 0.85 < np.mean(ses) / np.std(means, ddof=1) < 1.15


# ---------------------------------------------------------------- rejected inputs


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"logp_sampler": [-1.0, 0.5]}, r"logp_sampler has a value > 0 at index 1: 0.5;"),
        ({"logp_other": [-1.0, 1e-3]}, r"logp_other has a value > 0 at index 1: 0.001;"),
        ({"logp_other": [-1.0, np.nan]}, r"logp_other has a NaN or infinite value at index 1: nan"),
        ({"logp_sampler": [-np.inf, -1.0]}, r"logp_sampler has a NaN or infinite value at index 0: -inf"),
        ({"logp_other": [-1.0, -np.inf]}, r"logp_other has a NaN or infinite value at index 1: -inf"),
        ({"logp_sampler": [], "logp_other": []}, r"logp_sampler is empty"),
        ({"logp_other": [-1.0]}, r"logp_other has length 1, but logp_sampler has length 2"),
        ({"logp_sampler": [[-1.0, -1.0]]}, r"logp_sampler must be 1-D"),
        ({"logp_sampler": ["a", "b"]}, r"logp_sampler must be numeric"),
        ({"mask": [0, 0]}, r"mask keeps none of the 2 tokens"),
        ({"mask": [False, False]}, r"mask keeps none"),
        ({"mask": [1, 2]}, r"mask must be boolean or 0/1"),
        ({"mask": [1]}, r"mask has length 1"),
        ({"positions": [0, -1]}, r"positions must be integers >= 0"),
        ({"positions": [0, 1.5]}, r"positions must be integers >= 0"),
        ({"positions": [0, 1, 2]}, r"positions has length 3"),
        ({"sequence_ids": [1]}, r"sequence_ids has length 1"),
        ({"sequence_ids": [1.0, np.nan]}, r"sequence_ids contains NaN"),
        ({"sequence_ids": ["a", None]}, r"sequence_ids contains missing"),
        ({"logp_rollout": [-1.0, 0.1]}, r"logp_rollout has a value > 0 at index 1: 0.1;"),
        ({"logp_rollout": [-1.0]}, r"logp_rollout has length 1"),
        ({"direction": "forward"}, r"direction must be one of"),
        ({"logp_tolerance": -1.0}, r"logp_tolerance must be >= 0"),
        ({"logp_tolerance": np.nan}, r"logp_tolerance must be finite"),
    ],
)
def test_audit_rejects_bad_input(kwargs: dict, match: str) -> None:
    args = {"logp_sampler": [-1.0, -2.0], "logp_other": [-1.5, -0.5]} | kwargs
    with pytest.raises(ValueError, match=match):
        audit(**args)


def test_tiny_positive_logp_is_float_noise() -> None:
    rep = audit([-1.0, 1e-7], [-1.5, -0.2])
    assert rep.n == 2
    with pytest.raises(ValueError, match="logp_sampler"):
        audit([-1.0, 1e-7], [-1.5, -0.2], logp_tolerance=0.0)


# ---------------------------------------------------------------- loader


def _frame(n: int = 40) -> pd.DataFrame:
    ls, lo = _logps(n, seed=30)
    return pd.DataFrame(
        {
            "seq": np.arange(n) // 10,
            "pos": np.arange(n) % 10,
            "lp_old": ls,
            "lp_new": lo,
            "m": (np.arange(n) % 10 >= 2).astype(int),
        }
    )


def test_loader_reads_csv_and_parquet_alike(tmp_path: Path) -> None:
    df = _frame()
    df.to_csv(tmp_path / "t.csv", index=False, float_format="%.17g")
    df.to_parquet(tmp_path / "t.parquet")
    cols = {"mask_col": "m", "position_col": "pos", "sequence_col": "seq"}
    a = load_table(tmp_path / "t.csv", "lp_old", "lp_new", **cols)
    b = load_table(str(tmp_path / "t.parquet"), "lp_old", "lp_new", **cols)
    for t in (a, b):
        np.testing.assert_array_equal(t.logp_sampler, df["lp_old"].to_numpy())
        np.testing.assert_array_equal(t.logp_other, df["lp_new"].to_numpy())
        np.testing.assert_array_equal(t.mask, df["m"].to_numpy() == 1)
        np.testing.assert_array_equal(t.positions, df["pos"].to_numpy())
        np.testing.assert_array_equal(t.sequence_ids, df["seq"].to_numpy())
        assert t.logp_rollout is None and t.n_rows == 40
    assert a.columns == {
        "logp_sampler": "lp_old",
        "logp_other": "lp_new",
        "mask": "m",
        "positions": "pos",
        "sequence_ids": "seq",
    }
    assert audit(**a.as_kwargs()) == audit(**b.as_kwargs())


def test_loader_reads_buffers(tmp_path: Path) -> None:
    df = _frame()
    buf = io.BytesIO()
    df.to_parquet(buf)
    buf.seek(0)
    buf.name = "upload.parquet"  # what an uploaded file carries
    assert load_table(buf, "lp_old", "lp_new").logp_sampler.size == 40
    raw = io.BytesIO(df.to_csv(index=False).encode())
    assert load_table(raw, "lp_old", "lp_new", fmt="csv").n_rows == 40
    with pytest.raises(ValueError, match=r"pass fmt="):
        load_table(io.BytesIO(b"a,b\n-1,-1\n"), "a", "b")
    with pytest.raises(ValueError, match=r"fmt must be 'csv' or 'parquet'"):
        load_table(io.BytesIO(b"a,b\n-1,-1\n"), "a", "b", fmt="json")


def test_loader_rejects_other_extensions(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    _frame().to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"path_or_buffer must be a \.csv or \.parquet file"):
        load_table(path, "lp_old", "lp_new")


def test_loader_rejects_unparseable_files(tmp_path: Path) -> None:
    bad_pq = tmp_path / "t.parquet"
    bad_pq.write_bytes(b"this is not parquet at all")
    with pytest.raises(ValueError, match=r"could not be parsed as PARQUET"):
        load_table(bad_pq, "lp_old", "lp_new")
    ragged = tmp_path / "r.csv"
    ragged.write_text("lp_old,lp_new\n-1,-2\n-1,-2,-3,-4\n")
    with pytest.raises(ValueError, match=r"could not be parsed as CSV"):
        load_table(ragged, "lp_old", "lp_new")
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"path_or_buffer: '.*e\.csv' is empty"):
        load_table(empty, "lp_old", "lp_new")
    header_only = tmp_path / "h.csv"
    header_only.write_text("lp_old,lp_new\n")
    with pytest.raises(ValueError, match=r"has no data rows"):
        load_table(header_only, "lp_old", "lp_new")
    with pytest.raises(ValueError, match=r"is not a file"):
        load_table(tmp_path / "missing.csv", "lp_old", "lp_new")


def test_loader_rejects_missing_column_and_lists_the_others(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    _frame().to_csv(path, index=False)
    with pytest.raises(
        ValueError,
        match=r"other_col='logp_ref' is not a column; available columns: 'seq', 'pos', 'lp_old'",
    ):
        load_table(path, "lp_old", "logp_ref")
    with pytest.raises(ValueError, match=r"mask_col='mask' is not a column"):
        load_table(path, "lp_old", "lp_new", mask_col="mask")
    with pytest.raises(ValueError, match=r"other_col='lp_old' is the same column as sampler_col"):
        load_table(path, "lp_old", "lp_old")


def test_loader_rejects_nan_nonnumeric_positive_and_bad_mask(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    df = _frame()
    df.loc[7, "lp_new"] = np.nan
    df.to_csv(path, index=False)
    with pytest.raises(
        ValueError,
        match=r"other_col='lp_new': column has a NaN/missing value \(data row 8\)",  # df row 7: data row 8
    ):
        load_table(path, "lp_old", "lp_new")

    df = _frame()
    df["lp_new"] = df["lp_new"].astype(str)
    df.loc[3, "lp_new"] = "oops"
    df.to_csv(path, index=False)
    with pytest.raises(
        ValueError,
        match=r"other_col='lp_new': column is not numeric \(dtype \w+\); first non-numeric value at data row 4: 'oops'$",
    ):
        load_table(path, "lp_old", "lp_new")

    df = _frame()
    df.loc[5, "lp_old"] = 0.25  # a probability or a logit, not a log-prob
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"sampler_col='lp_old' has a value > 0 at data row 6: 0.25;"):
        load_table(path, "lp_old", "lp_new")

    df = _frame()
    df.loc[2, "lp_old"] = -np.inf
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"sampler_col='lp_old' has a NaN or infinite value at data row 3: -inf$"):
        load_table(path, "lp_old", "lp_new")

    df = _frame()
    df.loc[4, "m"] = 3
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"mask_col='m' must be boolean or 0/1, got 3.0 at data row 5$"):
        load_table(path, "lp_old", "lp_new", mask_col="m")


def test_an_array_s_bad_value_is_named_by_its_index_as_a_plain_number() -> None:
    """Arrays passed to audit() keep 0-based indices (a file's columns say data rows, from 1); the
    value is a number, not numpy's repr (the mask's said "got np.float64(2.0)")."""
    ok = [-1.0, -1.0]
    with pytest.raises(ValueError, match=r"^mask must be boolean or 0/1, got 2.0 at index 1$"):
        audit(ok, ok, mask=[1, 2])
    with pytest.raises(ValueError, match=r"^positions must be integers >= 0, got -1.0 at index 1$"):
        audit(ok, ok, positions=[0, -1])
    with pytest.raises(ValueError, match=r"^exact_kl has a negative value \(row 1: -0.5\)"):
        audit(ok, ok, exact_kl=[0.1, -0.5])


def test_loader_rejects_oversize_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.csv"
    _frame().to_csv(path, index=False)
    monkeypatch.setattr(audit_mod, "MAX_FILE_BYTES", 100)
    with pytest.raises(ValueError, match=r"larger than the 100-byte limit"):
        load_table(path, "lp_old", "lp_new")
    buf = io.BytesIO(path.read_bytes())
    buf.name = "t.csv"
    with pytest.raises(ValueError, match=r"larger than the 100-byte limit"):
        load_table(buf, "lp_old", "lp_new")
    # An explicit max_bytes overrides the module constant.
    assert load_table(path, "lp_old", "lp_new", max_bytes=10**6).n_rows == 40
    with pytest.raises(ValueError, match=r"max_bytes must be a positive integer"):
        load_table(path, "lp_old", "lp_new", max_bytes=0)


# ---------------------------------------------------------------- the exact-KL column (rb)


def _markov_tokens(n_seq: int, length: int, seed: int):
    """Tokens of a Markov-chain policy, flattened: log-probs, exact next-token KLs, ids, positions."""
    from kl_core.sequences.markov import drift_pair, next_token_kl

    policy, ref = drift_pair(6, 0.6)
    x = policy.sample(np.random.default_rng(seed), n_seq, length)
    prev = np.concatenate([np.full((n_seq, 1), -1), x[:, :-1]], axis=1)
    first = prev < 0
    pp = prev.clip(0)
    ls = np.where(first, policy.log_first[x], policy.log_transitions[pp, x])
    lo = np.where(first, ref.log_first[x], ref.log_transitions[pp, x])
    k0, kap = next_token_kl(policy, ref)
    kl_tok = np.where(first, k0, kap[pp])
    ids = np.repeat(np.arange(n_seq), length)
    pos = np.tile(np.arange(length), n_seq)
    return policy, ref, ls.ravel(), lo.ravel(), kl_tok.ravel(), ids, pos


def test_rb_figures_match_numpy_and_reduce_the_variance() -> None:
    from kl_core.sequences.markov import per_position_kl

    policy, ref, ls, lo, kl_tok, ids, pos = _markov_tokens(400, 12, seed=40)
    rep = audit(ls, lo, exact_kl=kl_tok, sequence_ids=ids, positions=pos)
    v = kl_tok
    assert rep.rb.mean == pytest.approx(v.mean(), rel=1e-12)
    assert rep.rb.std == pytest.approx(v.std(ddof=1), rel=1e-10)
    assert rep.rb.se == pytest.approx(v.std(ddof=1) / math.sqrt(v.size), rel=1e-10)
    np.testing.assert_array_equal(rep.values["rb"], v)
    assert rep.all_summaries["rb"] is rep.rb and list(rep.summaries) == ["k1", "k2", "k3"]
    for k in ("k1", "k3"):
        assert rep.variance_ratio[k] == pytest.approx(
            np.var(rep.values[k], ddof=1) / np.var(v, ddof=1), rel=1e-9
        )
    # Per token rb = E[k1 | prefix] = E[k3 | prefix]: a smaller spread, the same mean.
    assert rep.variance_ratio["k1"] > 10 and rep.variance_ratio["k3"] > 1
    truth = per_position_kl(policy, ref, 12).sum() / 12
    assert abs(rep.rb.mean - truth) < 4 * rep.rb.se
    assert abs(rep.k1.mean - truth) < 4 * rep.k1.se
    # per sequence: sums of rb estimate the sequence KL, with their own variance ratio
    seq = rep.sequences
    sums = np.bincount(ids, weights=v)
    np.testing.assert_allclose(seq.sums["rb"], sums, rtol=1e-12)
    assert seq.variance_ratio["k1"] == pytest.approx(
        np.var(seq.sums["k1"], ddof=1) / np.var(sums, ddof=1), rel=1e-9
    )
    assert abs(seq.stats["rb"].mean - per_position_kl(policy, ref, 12).sum()) < 4 * seq.stats["rb"].se
    # per position: rb beside k1..k3
    b0 = rep.positions[0]
    assert (
        b0.lo == 0 and b0.se["rb"] < 1e-15 and "rb_mean" in b0.to_dict()
    )  # one value: rb_1 = KL_1


def test_rb_in_the_json_report() -> None:
    ls, lo = _logps(50, seed=41)
    kl_tok = np.random.default_rng(42).exponential(0.05, 50)
    d = audit(ls, lo, exact_kl=kl_tok, sequence_ids=np.arange(50) // 5).to_dict()
    assert set(d["rb"]) == {"mean", "std", "se", "neg_fraction", "p95", "p99", "max"}
    assert set(d["variance_ratio"]) == {"k1", "k3"}
    assert d["definitions"]["rb"] == audit_mod.RB_DEFINITIONS["sampler-other"]
    assert "rb" in d["sequences"] and set(d["sequences"]["variance_ratio"]) == {"k1", "k3"}
    json.dumps(d, allow_nan=False)
    plain = audit(ls, lo).to_dict()
    assert plain["rb"] is None and plain["variance_ratio"] is None
    assert "rb" not in plain["definitions"]


def test_rb_with_rollout_weights_and_mask() -> None:
    ls, lo = _logps(600, seed=43)
    rng = np.random.default_rng(44)
    lr = np.minimum(ls + rng.normal(0.0, 0.3, ls.size), 0.0)
    kl_tok = rng.exponential(0.05, ls.size)
    keep = rng.random(ls.size) < 0.7
    rep = audit(ls, lo, exact_kl=kl_tok, logp_rollout=lr, mask=keep)
    w = np.exp(ls - lr)[keep]
    assert rep.rb.mean == pytest.approx(np.average(kl_tok[keep], weights=w), rel=1e-10)


def test_rb_of_a_constant_column_has_an_infinite_variance_ratio() -> None:
    ls, lo = _logps(30, seed=45)
    rep = audit(ls, lo, exact_kl=np.full(30, 0.1))
    assert rep.rb.std < 1e-15 and rep.variance_ratio["k1"] == math.inf


@pytest.mark.parametrize(
    ("kl", "match"),
    [
        ([0.1, -0.5, 0.2, -0.01], r"exact_kl has 2 negative values \(rows 1, 3, e\.g\. -0\.5\)"),
        ([0.1, np.nan, 0.2, 0.3], r"exact_kl has a NaN or infinite value \(row 1\)"),
        ([0.1, np.inf, 0.2, 0.3], r"exact_kl has a NaN or infinite value \(row 1\)"),
        ([0.1, 0.2], r"exact_kl has length 2, but logp_sampler has length 4"),
        ([[0.1, 0.2, 0.3, 0.4]], r"exact_kl must be 1-D"),
        (["a", "b", "c", "d"], r"exact_kl must be numeric"),
    ],
)
def test_rb_column_rejects_bad_values(kl: list, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        audit([-1.0, -2.0, -0.5, -0.7], [-1.5, -0.5, -0.6, -0.7], exact_kl=kl)


def test_rb_column_lists_at_most_five_rows_and_accepts_float_noise() -> None:
    kl = -np.ones(12)
    with pytest.raises(ValueError, match=r"rows 0, 1, 2, 3, 4, … \(12 in all\)"):
        audit(np.full(12, -1.0), np.full(12, -1.2), exact_kl=kl)
    rep = audit([-1.0, -2.0], [-1.5, -0.5], exact_kl=[-1e-7, 0.3])
    assert rep.rb.mean == pytest.approx(0.15 - 0.5e-7)


def test_loader_reads_the_kl_column_and_names_bad_data_rows(tmp_path: Path) -> None:
    df = _frame()
    df["kl"] = np.linspace(0.0, 0.2, len(df))
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False, float_format="%.17g")
    t = load_table(path, "lp_old", "lp_new", kl_col="kl")
    np.testing.assert_array_equal(t.exact_kl, df["kl"].to_numpy())
    assert t.columns["exact_kl"] == "kl"
    assert audit(**t.as_kwargs()).rb is not None
    df.loc[[3, 9], "kl"] = -0.5
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"kl_col='kl' has 2 negative values \(data rows 4, 10"):  # df rows 3, 9
        load_table(path, "lp_old", "lp_new", kl_col="kl")
    with pytest.raises(ValueError, match=r"kl_col='lp_new' is the same column as other_col"):
        load_table(path, "lp_old", "lp_new", kl_col="lp_new")
    assert load_table(path, "lp_old", "lp_new").exact_kl is None


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_example_rb_column_gives_the_exact_kl(example, direction: str) -> None:
    table, meta = example
    col = meta["kl_cols"][direction]
    t = load_table(EXAMPLE_CSV, **meta["audit_args"], kl_col=col)
    rep = audit(**t.as_kwargs(), direction=direction)
    d = direction.replace("-", "_")
    # Positions only: each rb value is the exact KL at its position, so the mean
    # is the exact expectation up to the file's 10 significant digits.
    assert rep.rb.mean == pytest.approx(meta["exact"][f"kl_{d}_per_token"], rel=1e-9)
    assert rep.sequences.stats["rb"].mean == pytest.approx(
        meta["exact"][f"kl_{d}_per_sequence"], rel=1e-9
    )
    assert rep.variance_ratio["k1"] > 1 and rep.variance_ratio["k3"] > 1
    assert rep.sequences.variance_ratio["k1"] > 1


def test_the_se_band_coverage_is_simulated_seeded_and_too_low() -> None:
    c = audit_mod.se_band_coverage()
    assert (c.key, c.q, c.p, c.n, c.runs, c.z) == ("k3", "N(0, 1)", "N(3, 1)", 1000, 2000, 1.96)
    assert audit_mod.se_band_coverage() is c  # computed once per process
    # the ±1.96 SE band should hold the exact KL in 95% of runs; with k3's heavy tail it does not
    se = math.sqrt(0.95 * 0.05 / c.runs)
    assert c.coverage < 0.95 - 10 * se
    assert 0.5 < c.coverage < 0.7  # the audit of the page measured 0.58 (300 seeds) and 0.60 (3,000)


def test_the_too_few_tokens_note_is_about_the_per_token_figures() -> None:
    # the position buckets and the sequence sums have their own SEs: the note is about the per-token ones
    for n, what in ((10, "tokens"), (5.4, "effective tokens")):
        note = str(audit_mod.sample_size_check(n, what).note)
        assert "so the per-token SE, std, p95 and p99 are not shown" in note


def test_values_too_large_to_square_give_the_finite_sd_without_a_warning() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        rep = audit([-1.0] * 40 + [-700.0], [-1.0] * 40 + [0.0])  # k3 ≈ e^700 on one token
    # Var ≈ e^1400 / 41 is past a double; the SD ≈ e^700 / √41 and the SE are not.
    ref = _mp_summary(np.r_[np.zeros(40), 700.0], "k3", "sampler-other")
    assert rep.k3.mean == pytest.approx(float(ref["mean"]), rel=1e-12)
    assert rep.k3.std == pytest.approx(float(ref["std"]), rel=1e-12)
    assert rep.k3.se == pytest.approx(float(ref["se"]), rel=1e-12)
    assert math.isnan(rep.k3.log_std) and math.isnan(rep.k3.log_se)


def test_weighted_sequence_sums_count_effective_sequences() -> None:
    """40 sequences, but one rollout weight dominates: the sums' SE needs 30 *effective* sequences."""
    ids = np.repeat(np.arange(40), 2)
    lr = np.full(80, -1.0)
    lr[:2] = -30.0  # sequence 0's weight is e^58 times the others'
    rep = audit(np.full(80, -1.0), np.full(80, -1.3), sequence_ids=ids, logp_rollout=lr)
    seq = rep.sequences
    assert seq.n_sequences == 40 and seq.ess < 2
    few = seq.sample_size()
    assert few.n == seq.ess and not few.se
    assert str(few.note).startswith(f"Only {audit_mod.count_text(seq.ess)} effective sequence")
    assert audit(np.full(80, -1.0), np.full(80, -1.3), sequence_ids=ids).sequences.sample_size().se


def test_count_text_never_rounds_across_a_threshold() -> None:
    ct = audit_mod.count_text
    assert ct(1234) == "1,234" and ct(12.34) == "12.3" and ct(4.0) == "4"
    assert ct(29.99) == "29.99" and ct(29.96) == "29.96" and ct(29.94) == "29.9" and ct(30.04) == "30.0"
    assert ct(99.96) == "99.96" and ct(30 - 1e-9) == "29.999999"
    with pytest.raises(ValueError, match="n must be >= 0"):
        ct(-1.0)
    with pytest.raises(ValueError, match="n"):
        ct(math.nan)


def test_a_thin_weighted_position_bucket_reports_its_ess() -> None:
    rep = audit([-1.0] * 3, [-1.2] * 3, positions=[0, 1, 1], logp_rollout=[-1.0, -1.0, -3.0])
    b = rep.positions[1]
    assert b.count == 2 and b.ess == pytest.approx((1 + np.exp(-2)) ** 2 / (1 + np.exp(-4)))
    assert b.sample_size().n == b.ess and b.to_dict()["ess"] == b.ess
    assert audit([-1.0], [-1.2], positions=[0]).positions[0].ess is None


# ---------------------------------------------------------------- figures past a double

mpmath = pytest.importorskip("mpmath")
mp = mpmath.mp


def _mp_value(t: float, key: str, direction: str):
    """One estimator value at log r = t, exactly (50 digits)."""
    t = mp.mpf(t)
    r = mp.exp(t)
    if direction == "sampler-other":
        return {"k1": -t, "k2": t**2 / 2, "k3": (r - 1) - t}[key]
    return {"k1": r * t, "k2": r * t**2 / 2, "k3": r * t - (r - 1)}[key]


def _mp_stats(v, w=None) -> dict[str, object]:
    """Mean, SD, SE of mpmath values, with SNIS weights as the module docstring defines them."""
    n = len(v)
    w = [mp.mpf(1)] * n if w is None else [mp.mpf(x) for x in w]
    sw, sw2 = mp.fsum(w), mp.fsum(x * x for x in w)
    m = mp.fsum(a * b for a, b in zip(w, v, strict=True)) / sw
    d2 = [(x - m) ** 2 for x in v]
    std = mp.sqrt(mp.fsum(a * b for a, b in zip(w, d2, strict=True)) / (sw - sw2 / sw))
    se = mp.sqrt(mp.mpf(n) / (n - 1) * mp.fsum(a * a * b for a, b in zip(w, d2, strict=True))) / sw
    return {"mean": m, "std": std, "se": se}


def _mp_summary(logr: np.ndarray, key: str, direction: str, logw: np.ndarray | None = None):
    with mp.workdps(50):
        v = [_mp_value(float(t), key, direction) for t in logr]
        w = None if logw is None else [mp.exp(mp.mpf(float(x))) for x in logw]
        out = _mp_stats(v, w)
        out["values"] = v
        return out


def _close_log(s, name: str, exact, rel: float = 1e-12) -> None:
    """The figure ``name`` of summary ``s`` against an mpmath value, as a float where it fits, else by its log."""
    x, log_x = getattr(s, name), getattr(s, f"log_{name}")
    if exact < mp.mpf(np.finfo(np.float64).max):
        assert math.isnan(log_x) and x == pytest.approx(float(exact), rel=rel), name
    else:
        assert x == math.inf and log_x == pytest.approx(float(mp.log(exact)), rel=rel), name


@pytest.mark.parametrize("t", [720.0, 800.0, 1500.0])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_one_token_past_a_double_among_ordinary_ones_gives_finite_figures(t: float, direction: str) -> None:
    ls, lo = _logps(400, seed=3)
    ls[17], lo[17] = -t - 1.0, -1.0  # log r = t on one token
    logr = lo - ls
    rep = audit(ls, lo, direction=direction)
    for key in ("k1", "k2", "k3"):
        s = rep.summaries[key]
        ref = _mp_summary(logr, key, direction)
        for name in ("mean", "std", "se"):
            _close_log(s, name, ref[name])
        _close_log(s, "max", max(ref["values"]))
        assert "inf" not in json.dumps(s.to_dict())
    overflowed = "k3" if direction == "sampler-other" else "k1"
    assert rep.summaries[overflowed].mean == math.inf  # e^t / 400 is past a double: written from its log
    assert rep.log_values[overflowed][17] == pytest.approx(float(mp.log(_mp_value(t, overflowed, direction))))


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_a_token_with_log_r_of_minus_800_changes_nothing_that_fits(direction: str) -> None:
    ls, lo = _logps(400, seed=3)
    ls[17], lo[17] = -1.0, -801.0
    rep = audit(ls, lo, direction=direction)
    assert not rep.log_values
    for key in ("k1", "k2", "k3"):
        ref = _mp_summary(lo - ls, key, direction)
        for name in ("mean", "std", "se"):
            _close_log(rep.summaries[key], name, ref[name])


def test_mean_and_sd_that_fit_a_double_when_a_value_does_not() -> None:
    # log r = 712: k3 ≈ e^712 overflows, but the mean e^712 / 5000 and the SD e^712 / √5000 fit.
    ls, lo = np.full(5000, -1.0), np.full(5000, -1.1)
    ls[0], lo[0] = -713.0, -1.0
    rep = audit(ls, lo)
    ref = _mp_summary(lo - ls, "k3", "sampler-other")
    assert math.isfinite(rep.k3.mean) and math.isfinite(rep.k3.std) and math.isfinite(rep.k3.se)
    for name in ("mean", "std", "se"):
        _close_log(rep.k3, name, ref[name])
    _close_log(rep.k3, "max", ref["values"][0])


def test_a_whole_weighted_file_past_a_double_matches_mpmath() -> None:
    rng = np.random.default_rng(11)
    n = 240
    logr = rng.uniform(700.0, 900.0, n)
    ls = -logr - 1.0
    lo = np.full(n, -1.0)
    lr = ls - rng.uniform(0.0, 2.0, n)  # rollout weights w = e^(ls - lr)
    ids = np.arange(n) // 8
    pos = np.arange(n) % 8
    rep = audit(ls, lo, direction="other-sampler", logp_rollout=lr, sequence_ids=ids, positions=pos)
    logw = ls - lr
    for key in ("k1", "k2", "k3"):
        s = rep.summaries[key]
        ref = _mp_summary(logr, key, "other-sampler", logw)
        for name in ("mean", "std", "se"):
            _close_log(s, name, ref[name])
        # weighted inverted-CDF percentiles: values past a double are ranked by their log
        with mp.workdps(50):
            order = sorted(range(n), key=lambda i: ref["values"][i])
            w = [mp.exp(mp.mpf(float(logw[i]))) for i in order]
            cw = np.cumsum([float(x / max(w)) for x in w])
            for name, q in (("p95", 0.95), ("p99", 0.99)):
                i = min(int(np.searchsorted(cw, q * cw[-1], side="left")), n - 1)
                _close_log(s, name, ref["values"][order[i]])
        _close_log(s, "max", max(ref["values"]))
        # sequence sums: each one past a double, from its log
        seq = rep.sequences
        with mp.workdps(50):
            sums = [mp.fsum(ref["values"][i] for i in range(n) if ids[i] == j) for j in range(n // 8)]
        assert np.all(np.isinf(seq.sums[key]))
        np.testing.assert_allclose(seq.log_sums[key], [float(mp.log(x)) for x in sums], rtol=1e-12)
        with mp.workdps(50):
            seq_logw = [float(sum(logw[ids == j])) for j in range(n // 8)]
            seq_ref = _mp_stats(sums, [mp.exp(mp.mpf(x) - max(seq_logw)) for x in seq_logw])
        for name in ("mean", "std", "se"):
            _close_log(seq.stats[key], name, seq_ref[name])
        # a position bucket's mean and SE, by their logs
        b = rep.positions[-1]
        sel = pos >= b.lo
        bref = _mp_summary(logr[sel], key, "other-sampler", logw[sel])
        assert b.mean[key] == math.inf and b.log_mean[key] == pytest.approx(float(mp.log(bref["mean"])), rel=1e-12)
        assert b.log_se[key] == pytest.approx(float(mp.log(bref["se"])), rel=1e-12)
    d = rep.to_dict(per_sequence=True)
    text = json.dumps(d, allow_nan=False)
    assert '"inf"' not in text.replace('"hi": "inf"', "")
    assert d["positions"][-1]["log_k3_mean"] == rep.positions[-1].log_mean["k3"]
    assert d["sequences"]["log_sums"]["k1"][0] == rep.sequences.log_sums["k1"][0]
    assert d["sequences"]["sums"]["k1"][0] == from_log(rep.sequences.log_sums["k1"][0], 12)


def test_variance_ratio_past_a_double_is_its_log_not_zero() -> None:
    # Var(k3) ≈ e^1600 / n: the ratio to Var(rb) is past a double (the old code said 0).
    ls, lo = _logps(200, seed=5)
    ls[0], lo[0] = -801.0, -1.0
    rb = np.linspace(0.01, 0.05, 200)
    rep = audit(ls, lo, exact_kl=rb, sequence_ids=np.arange(200) // 4)
    ref = _mp_summary(lo - ls, "k3", "sampler-other")
    with mp.workdps(50):
        rb_ref = _mp_stats([mp.mpf(float(x)) for x in rb])
        exact = (ref["std"] / rb_ref["std"]) ** 2
    assert rep.variance_ratio["k3"] == math.inf
    assert rep.log_variance_ratio["k3"] == pytest.approx(float(mp.log(exact)), rel=1e-12)
    assert rep.variance_ratio["k1"] == pytest.approx(
        float((_mp_summary(lo - ls, "k1", "sampler-other")["std"] / rb_ref["std"]) ** 2), rel=1e-10)
    assert rep.sequences.variance_ratio["k3"] == math.inf and rep.sequences.log_variance_ratio["k3"] > 1590
    d = rep.to_dict()["variance_ratio"]
    assert d["k3"] == from_log(rep.log_variance_ratio["k3"], 12) and d["log_k3"] == rep.log_variance_ratio["k3"]


def test_variance_ratio_of_sds_whose_squares_overflow_is_finite() -> None:
    # SD of k1 (other-sampler) ≈ 1e202 and SD of rb ≈ 1e200: each square is past a double,
    # the ratio of the variances is about 1e4.
    ls, lo = np.full(40, -1.0), np.full(40, -1.0)
    ls[0] = -466.0
    rb = np.full(40, 1.0)
    rb[0] = float(_mp_value(465.0, "k1", "other-sampler") / 100)
    rep = audit(ls, lo, direction="other-sampler", exact_kl=rb)
    with mp.workdps(50):
        k1 = _mp_stats([_mp_value(465.0 if i == 0 else 0.0, "k1", "other-sampler") for i in range(40)])
        rbs = _mp_stats([mp.mpf(float(x)) for x in rb])
        exact = float((k1["std"] / rbs["std"]) ** 2)
    assert rep.variance_ratio["k1"] == pytest.approx(exact, rel=1e-11)


def test_a_masked_summary_keeps_the_logs_of_what_it_shows() -> None:
    rep = audit([-801.0, -1.0, -1.0], [-1.0, -1.0, -1.2])
    few = rep.sample_size().masked(rep.k3)
    assert few.mean == math.inf and few.log_mean == rep.k3.log_mean and math.isnan(few.log_std)
    assert few.log_max == pytest.approx(800.0, rel=1e-15)
    with pytest.raises(ValueError, match="name must be one of"):
        rep.k3.log_abs("neg_fraction")


def test_a_square_past_a_double_times_a_zero_ratio_is_zero_not_nan() -> None:
    # other-sampler k2 = r (log r)^2 / 2 with log r = -1e200: r = 0, (log r)^2 = inf. Such a log-prob is
    # now refused as a fill value (LOGP_FLOOR); at the floor the square is finite and the product still 0
    with pytest.raises(ValueError, match="fill value"):
        audit([-1.0, -1.0], [-1e200, -1.0], direction="other-sampler")
    rep = audit([-1.0, -1.0], [audit_mod.LOGP_FLOOR, -1.0], direction="other-sampler")
    assert rep.k2.mean == 0.0 and rep.k2.max == 0.0


def test_a_fill_value_below_the_floor_is_refused_by_name_not_an_overflow():
    """An audit: a sampler log-prob of float32's minimum (−3.4e38, a fill value) raised OverflowError in ldexp."""
    from kl_core.audit.statistics import LOGP_FLOOR, audit

    with pytest.raises(ValueError, match=r"logp_sampler has a value below -1e\+12 at index 1: -3\.4e\+38; that is a "
                                         r"fill value"):
        audit([-1.0, -3.4e38], [-1.0, -1.0])
    with pytest.raises(ValueError, match="logp_other has 2 values below"):
        audit([-1.0, -1.0, -1.0], [-2e12, -1.0, -5e12])
    # just above the floor the log-space figures are exact: k3's mean is e^(log r)/n to first order
    for n_seq, ids in ((2, None), (3, [0, 0, 1])):
        logp = [-1.0, LOGP_FLOOR * 0.99, -5.0][:n_seq]
        other = [-1.0, -1.0, -2.0][:n_seq]
        rep = audit(logp, other, sequence_ids=ids)
        log_r = other[1] - logp[1]
        assert rep.k3.mean == math.inf
        assert rep.k3.log_mean == pytest.approx(log_r - math.log(n_seq), rel=1e-15, abs=1e-6)


def test_a_column_with_a_fill_value_names_its_data_rows(tmp_path):
    from kl_core.audit.statistics import load_table

    path = tmp_path / "fill.csv"
    rows = ["logp_policy,logp_ref"] + [f"{-1.0 - 0.01 * i},-1.1" for i in range(40)] + ["-3.4028e38,-1.0"]
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError) as exc:
        load_table(str(path), "logp_policy", "logp_ref")
    assert "data row 41" in str(exc.value) and "fill value" in str(exc.value)


def test_identical_columns_give_zeros_not_negative_zeros():
    from kl_core.audit.statistics import audit

    rep = audit([-1.0, -2.0, -0.5], [-1.0, -2.0, -0.5])
    for s in (rep.k1, rep.k2, rep.k3):
        for x in (s.mean, s.p95, s.p99, s.max):
            assert x == 0.0 and math.copysign(1.0, x) == 1.0


def test_a_column_of_one_value_has_no_spread():
    """An audit: 50 tokens with the same log-ratio gave "k3 (0.10653 ± 4e-18)": the mean of 50 equal doubles is
    rounded, and the spread around it was that rounding.  Equal values have SD and SE 0, and their own mean."""
    import numpy as np

    from kl_core.audit.statistics import audit

    r = audit(np.full(50, -1.0), np.full(50, -1.5))
    for s in (r.k1, r.k2, r.k3):
        assert s.std == 0.0 and s.se == 0.0
    assert r.k1.mean == 0.5  # log π_sampler − log π_other = −1 − (−1.5) in every token
    weighted = audit(np.full(40, -1.0), np.full(40, -1.2), logp_rollout=np.linspace(-1.3, -0.9, 40))
    assert weighted.k1.std == 0.0 and weighted.k1.se == 0.0
