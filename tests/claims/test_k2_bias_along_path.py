"""Claim 8 (f-divergences page, k2's summary): "k2's bias starts at 0 and grows with the distance".

On the logit path the relative bias goes to −0.10 (θ ≈ 0.8), is 0 again at θ ≈ 1.6 and
reaches +0.66 at θ = 3; on the scale path it is negative for θ > 0.  The caption under
the relative-bias chart now describes each side of θ = 0 from the computed numbers on the
range the slider shows (lab.notes.f_divergences.bias_sides); the section's opening says
the size grows at first and further out can shrink, vanish and change sign.
"""

import itertools

import numpy as np
import pytest

from kl_core.estimation.estimators import ESTIMATORS
from kl_core.estimation.fisher import k2_bias_along_path
from kl_core.estimation.paths import PATHS
from lab.notes import estimator_lab
from lab.notes import f_divergences as notes


def _ranges(path: str):
    """The θ-range slider's settings: the full range, and pairs of ends on a coarse sub-grid."""
    top, step = PATHS[path].theta_max, notes.step_of(path)
    n = round(top / step)
    ends = np.round(np.linspace(-n, n, 9).round() * step, 10)
    yield -top, top
    yield from ((float(a), float(b)) for a, b in itertools.combinations(ends, 2))


def _shown(bias, ends, lo, hi):
    t = np.concatenate([bias.thetas, ends.thetas])
    rb = np.concatenate([bias.relative_bias, ends.relative_bias])
    keep = (t >= lo) & (t <= hi) & np.isfinite(rb)
    return t[keep], rb[keep]


@pytest.mark.parametrize("path", list(PATHS))
def test_k2_bias_caption_is_true_on_every_range(path):
    grid = notes.theta_grid(path)  # the page's integration grid
    bias = k2_bias_along_path(path, grid)
    kinds = set()
    for lo, hi in _ranges(path):
        ends = k2_bias_along_path(path, np.array([lo, hi]))
        text = notes.relative_bias_caption(path, bias, [], lo, hi, ends)
        assert "grows with the distance" not in text
        t, rb = _shown(bias, ends, lo, hi)
        for s in notes.bias_sides(bias, lo, hi, ends):
            on_side = t > 0 if s.side == "θ > 0" else t < 0
            order = np.argsort(np.abs(t[on_side]))
            ts, ds = t[on_side][order], rb[on_side][order]
            ts, idx = np.unique(ts, return_index=True)  # the ends may repeat a grid point
            ds = ds[idx]
            order = np.argsort(np.abs(ts))
            ts, ds = ts[order], ds[order]
            assert (s.t_a, s.a, s.t_b, s.b) == (ts[0], ds[0], ts[-1], ds[-1])
            size = np.diff(np.abs(ds))
            same_sign = (np.sign(ds) == np.sign(ds[0])).all()
            kinds.add(s.kind)
            if s.kind == "grows":
                assert same_sign and (size >= 0).all()
                assert f"For {s.side} it grows in size, from {s.a:+.3g}" in text
            elif s.kind == "shrinks":
                assert same_sign and (size <= 0).all()
                assert f"For {s.side} it shrinks in size" in text
            elif s.kind == "flips":
                assert not same_sign
                for z in s.zeros:  # k2 is exactly unbiased there (up to the grid's interpolation)
                    at = k2_bias_along_path(path, np.array([z])).relative_bias[0]
                    assert abs(at) < 0.02, (path, z, at)
                assert "changes sign" in text and "exactly unbiased" in text
            elif s.kind == "turns":
                assert same_sign and (size > 0).any() and (size < 0).any()
                assert "not monotone" in text
            else:
                assert s.kind == "single" and ts.size == 1
        if lo <= 0 <= hi:
            assert "tends to 0 as θ → 0" in text
    if path == "logit":
        assert {"flips", "turns"} <= kinds  # the logit path does what the old sentence denied


def test_the_logit_path_numbers():
    top = PATHS["logit"].theta_max
    bias = k2_bias_along_path("logit", notes.theta_grid("logit"))
    ends = k2_bias_along_path("logit", np.array([-top, top]))
    right = notes.bias_sides(bias, -top, top, ends)[0]
    assert right.kind == "flips" and len(right.zeros) == 1
    assert right.zeros[0] == pytest.approx(1.6, abs=0.05)
    t, rb = bias.thetas, bias.relative_bias
    middle = (t > 0) & (t < 1.5)
    assert rb[middle].min() == pytest.approx(-0.10, abs=0.005)
    assert right.b == pytest.approx(0.66, abs=0.01)


def test_the_opening_and_the_summary_are_true_in_general():
    assert "grows with the distance" not in notes.K2_BIAS_INTRO
    assert "its size grows at first" in notes.K2_BIAS_INTRO
    assert "can shrink, vanish and change sign" in notes.K2_BIAS_INTRO
    summary = ESTIMATORS["k2"].summary
    assert "grows with the distance" not in summary and "of either sign" in summary
    notice = estimator_lab.WHAT_TO_NOTICE  # the Estimator Lab's copy of the sentence
    assert "grows with the" not in notice and "can grow, shrink or change sign" in notice
    for path in PATHS:  # "grows at first": near θ = 0 the size of the bias rises on both sides
        small = np.array([0.01, 0.02, 0.04]) * PATHS[path].theta_max
        for sign in (1, -1):
            b = np.abs(k2_bias_along_path(path, sign * small).bias)
            assert (np.diff(b) > 0).all(), (path, sign)
    # "of either sign", "can vanish" and "large": both signs, and sizes above 1 on the pages' paths
    rb = np.concatenate([k2_bias_along_path(p, notes.theta_grid(p)).relative_bias for p in PATHS])
    rb = rb[np.isfinite(rb)]
    assert rb.min() < -0.3 and rb.max() > 1.0
