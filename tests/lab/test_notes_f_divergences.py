"""lab.notes.f_divergences: θ grids, the registry table, rows and captions."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.fisher import fisher_curve, k2_bias_along_path
from kl_core.estimation.paths import PATHS
from kl_core.estimation.published import SCHULMAN_2020
from lab.notes import f_divergences as notes


@pytest.mark.parametrize("path", list(PATHS))
def test_theta_grid_is_symmetric_sorted_and_denser_near_zero(path):
    grid = notes.theta_grid(path)
    top = PATHS[path].theta_max
    assert grid[0] == pytest.approx(-top) and grid[-1] == pytest.approx(top)
    assert np.all(np.diff(grid) > 0) and 0.0 in grid
    np.testing.assert_allclose(grid, -grid[::-1], atol=1e-12)
    gaps = np.diff(grid)
    assert gaps[len(gaps) // 2] < gaps[0]  # finer in the middle


def test_the_registry_table_has_every_f_and_its_curvature():
    table = notes.f_table()
    assert list(table["f-divergence"]) == [d.name for d in DIVERGENCES.values()]
    md = notes.f_table_markdown()
    assert md.count("\n") == len(DIVERGENCES) + 1
    assert "— (kink)" in md  # total variation
    assert "\\vert" in md and "|$" not in md  # bars inside maths cannot end a cell


def test_end_rows_are_the_cores_numbers():
    curve = fisher_curve("shift", "pearson", np.array([-1.0, 2.0]))
    rows = notes.end_rows([curve])
    assert [r["θ"] for r in rows] == [-1.0, 2.0]
    assert rows[1]["D_f(p_θ, p₀)"] == curve.exact[1]
    assert rows[1]["ratio"] == curve.ratio[1]


def test_captions_depend_on_the_path_and_the_view():
    assert "exactly θ²/2" in notes.path_caption(False, "shift", ["kl_qp"])
    # KL[p‖q] too is θ²/2 on the shift: neither KL "parts from its parabola" there
    for ratio in (False, True):
        text = notes.path_caption(ratio, "shift", ["kl_pq"])
        assert "KL[p‖q]" in text and "part from" not in text and "differs between" not in text
    text = notes.path_caption(False, "shift", ["kl_qp", "kl_pq", "hellinger"])
    assert "KL[q‖p] and KL[p‖q] are exactly θ²/2" in text and "the other lines part" in text
    assert "exactly θ²/2" not in notes.path_caption(False, "scale", ["kl_qp"])
    assert notes.path_caption(True, "shift", ["kl_qp"]).startswith("Every line heads to 1")
    assert "closed forms" not in notes.ends_caption("scale", 2.0)
    assert "$H^2 = 2(1 - e^{-\\theta^2/8})$" in notes.ends_caption("shift", 1.0)
    assert notes.f_curves_caption(True) != notes.f_curves_caption(False)


def test_the_infinite_note_appears_only_where_a_divergence_diverges():
    wide = fisher_curve("scale", "pearson", np.array([0.2, 0.5]))
    assert notes.infinite_note("scale", [wide], 0.0, 0.3) is None
    assert "σ² < 2" in notes.infinite_note("scale", [wide], 0.0, 0.6)
    assert notes.infinite_note("logit", [wide], 0.0, 0.6).startswith("Some f-divergence is infinite")


def test_schulmans_marks_rows_and_the_relative_bias_caption():
    mus = np.array([e.p.mu for e in SCHULMAN_2020])
    bias = k2_bias_along_path("shift", mus)
    marks = notes.schulman_marks("shift", bias)
    assert [m[0] for m in marks] == [0.1, 1.0]
    assert marks[1][1] == pytest.approx(0.25, rel=1e-9)  # θ²/4 at μ = 1
    assert notes.schulman_marks("scale", bias) == []
    rows = notes.schulman_rows(bias)
    assert [r["Schulman's printed k2 bias/true"] for r in rows] == ["0.002", "0.25"]
    assert rows[0]["(E[k2] − KL)/KL"] == pytest.approx(0.0025, rel=1e-9)
    along = k2_bias_along_path("shift", notes.theta_grid("shift"))
    assert "Widen the θ range to see μ = 1" in notes.relative_bias_caption("shift", along, marks, -0.5, 0.5)
    assert "Widen" not in notes.relative_bias_caption("shift", along, marks, -3, 3)
    # the dots the caption names are the ones drawn
    assert "The dots are Schulman's two cases" in notes.relative_bias_caption("shift", along, marks, -3, 3)
    assert "The dot is one of" in notes.relative_bias_caption("shift", along, marks, -0.5, 0.5)
    hidden = notes.relative_bias_caption("shift", along, marks, -3, 0)
    assert "dot" not in hidden.split("Widen")[0] and "μ = 0.1 and μ = 1" in hidden
    logit = k2_bias_along_path("logit", notes.theta_grid("logit"))
    assert "changes sign" in notes.relative_bias_caption("logit", logit, [], -3, 3)


def test_bias_sides_read_each_side_of_the_range():
    logit = k2_bias_along_path("logit", notes.theta_grid("logit"))
    sides = {s.side: s for s in notes.bias_sides(logit, -3, 3)}
    assert sides["θ > 0"].kind == "flips" and sides["θ > 0"].zeros[0] == pytest.approx(1.6, abs=0.05)
    assert sides["θ < 0"].kind == "grows"
    inner = notes.bias_sides(logit, 0.5, 1.4)
    assert [s.kind for s in inner] == ["turns"]
    text = notes.relative_bias_caption("logit", logit, [], 0.5, 1.4)
    assert text.startswith("Relative to the KL, k2's bias on the range shown:") and "not monotone" in text
    assert notes.bias_sides(logit, 0.5, 0.5)[0].kind == "single"


# ------------------------------------------------------------------ the answer (issue 20)


@functools.cache
def _grid(path: str):
    return k2_bias_along_path(path, notes.theta_grid(path))


def _answer(path: str, lo: float, hi: float) -> tuple[str, np.ndarray, np.ndarray]:
    grid, ends = _grid(path), k2_bias_along_path(path, [lo, hi])
    t, rb = notes._merged(grid, ends, lo, hi)
    return notes.answer(path, grid, lo, hi, ends), t, rb


def test_the_answer_at_the_defaults_is_the_mean_shift_band():
    text, t, rb = _answer("shift", -3.0, 3.0)
    # exact on the mean-shift path: the relative bias is θ²/4, within 10% for |θ| ≤ √0.4 = 0.632
    assert "within 10% of the KL for θ from -0.6 to 0.6" in text
    assert "at θ = 3 it is off by **+225%**" in text  # (±3)²/4


def test_each_branch_of_the_answer():
    assert "single point θ = 0" in _answer("shift", 0.0, 0.0)[0]
    assert "at θ = 1.2, E[k2] is off" in _answer("shift", 1.2, 1.2)[0]
    assert "p ≠ q throughout" in _answer("logit", 0.5, 3.0)[0]
    assert "over the whole range shown" in _answer("scale", -0.05, 0.05)[0]
    assert "for θ from 0 to 0.08" in _answer("scale", 0.0, 0.6)[0]


@pytest.mark.parametrize("path", list(PATHS))
def test_the_answer_is_true_on_every_range(path):
    """Ranges on the slider's steps, both ends moving; each claim checked on the numbers drawn."""
    top, step = PATHS[path].theta_max, notes.step_of(path)
    ends = np.round(np.arange(-top, top + step / 2, 4 * step), 10)
    for lo in ends:
        for hi in ends[ends >= lo][::3]:
            text, t, rb = _answer(path, float(lo), float(hi))
            if "stays within 10%" in text and "whole range" not in text:
                band = text.split("for θ from ")[1].split(",")[0]
                down, up = (float(x) for x in band.split(" to "))
                inside = (t >= down - 1e-9) & (t <= up + 1e-9)
                assert (np.abs(rb[inside]) <= notes.WITHIN).all(), (lo, hi, text)
                assert (np.abs(rb) > notes.WITHIN).any(), (lo, hi, text)
            if "whole range" in text:
                assert (np.abs(rb) <= notes.WITHIN).all(), (lo, hi, text)
            if "p ≠ q throughout" in text:
                assert lo > 0 or hi < 0


def test_a_range_where_k2_turns_unbiased_gives_the_signed_span_and_the_zero():
    """Logit path, θ from 1.5 to 1.65: −1.95 % at 1.5, exactly 0 near θ = 1.575, positive beyond.
    "Between +0.582% and +1.98%" and "include θ = 0 to see them meet" were false there."""
    text, t, rb = _answer("logit", 1.5, 1.65)
    assert rb.min() < 0.0 < rb.max()
    assert f"between {notes._percent(rb.min())} and {notes._percent(rb.max())}" in text
    zero = float(text.split("exactly unbiased at θ ≈ ")[1].rstrip("."))
    bias = k2_bias_along_path("logit", [zero - 0.005, zero + 0.005]).relative_bias
    assert bias[0] * bias[1] < 0  # the sign does change at the θ named
    assert "Include θ = 0" not in text


@pytest.mark.parametrize("path", list(PATHS))
def test_include_zero_is_said_only_where_the_sign_stays(path):
    top, step = PATHS[path].theta_max, notes.step_of(path)
    ends = np.round(np.arange(step, top + step / 2, 2 * step), 10)
    for lo in ends:
        for hi in ends[ends >= lo][::2]:
            for a, b in ((lo, hi), (-hi, -lo)):
                text, t, rb = _answer(path, float(a), float(b))
                if "Include θ = 0" in text:
                    assert (rb > 0).all() or (rb < 0).all(), (a, b, text)
                if "exactly unbiased" in text:
                    assert rb.min() <= 0.0 <= rb.max(), (a, b, text)


def test_the_path_caption_speaks_of_theta_0_only_where_the_range_shows_it():
    for ratio in (False, True):
        inside = notes.path_caption(ratio, "scale", ["k2", "hellinger"], -0.3, 0.3)
        outside = notes.path_caption(ratio, "scale", ["k2", "hellinger"], 0.1, 0.3)
        assert "outside the range shown" not in inside and "outside the range shown" in outside
    assert notes.path_caption(False, "scale", ["k2"], 0.1, 0.3).startswith("Each solid line is drawn")


def test_the_f_curves_caption_gives_the_slopes_the_registry_has():
    """It said the curves "leave it with different slopes f′(1)": k2, χ², Hellinger and JS all have 0."""
    from kl_core.estimation.divergences import DIVERGENCES

    text = notes.f_curves_caption(False)
    assert "different slopes" not in text
    slopes = sorted({d.fprime_at_1 for d in DIVERGENCES.values() if d.fprime_at_1 is not None})
    assert "slopes f′(1) of " + ", ".join(f"{v:g}".replace("-", "−") for v in slopes) in text
    assert "−1, 0, 1" in text and "The f of total variation has a kink there" in text


def test_one_exact_parabola_is_said_in_the_singular():
    """With only KL[q‖p] chosen on the shift path: "KL[q‖p] stay at exactly 1: each is …"."""
    assert "On this path KL[q‖p] stays at exactly 1: it is θ²/2" in notes.path_caption(True, "shift", ["kl_qp"])
    text = notes.path_caption(False, "shift", ["kl_qp", "k2"])
    assert "KL[q‖p] is exactly θ²/2: its solid line lies on its parabola" in text
    both = notes.path_caption(True, "shift", ["kl_qp", "kl_pq"])
    assert "stay at exactly 1: each is θ²/2" in both


def test_the_k2_against_kl_caption_knows_whether_theta_0_is_shown():
    """On the shift path with θ from 1 to 3 the lines do not "leave 0" on the chart."""
    assert "leave 0 together;" in notes.k2_vs_kl_caption(-3.0, 3.0)
    outside = notes.k2_vs_kl_caption(1.0, 3.0)
    assert "would leave 0 together at θ = 0, outside the range shown" in outside


def test_schulmans_caption_is_formatted_from_the_computed_biases():
    """The caption hard-coded 0.0025, 0.25 and 0.002; they now come from the numbers."""
    from types import SimpleNamespace

    from kl_core.estimation.fisher import k2_bias_along_path

    bias = k2_bias_along_path("shift", np.array([0.1, 1.0]))
    text = notes.schulman_caption(bias)
    assert "At μ = 0.1 it is 0.0025; his printed 0.002 comes from sampling, and the exact 0.0025 sits " \
           "right on the boundary of rounding to 3 decimals." in text
    assert "At μ = 1 it is 0.25; he printed 0.25, the same to his 2 decimals." in text
    other = SimpleNamespace(thetas=np.array([0.1, 1.0]), relative_bias=np.array([0.0031, 0.2612]))
    text = notes.schulman_caption(other)
    assert "0.0025" not in text and "the exact value rounds to 0.003 at 3 decimals" in text
    assert "At μ = 1 it is 0.2612; his printed 0.25 comes from sampling" in text


def test_the_end_table_caption_says_a_ratio_at_theta_0_is_a_limit():
    """At θ = 0 the table's ratio 1 is 0/0's limit; the caption said nothing of it."""
    assert "its limit, 1" in notes.ends_caption("shift", 1.0, at_zero=True)
    assert "its limit" not in notes.ends_caption("shift", 1.0)
