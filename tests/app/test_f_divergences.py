"""The "f-divergences & Fisher" page: it runs, every widget reruns it, its numbers are the core's.

Also the page's chart builders (``charts/f_divergences.py``): each spec validates
against the Vega-Lite schema (``lab.ui.chart`` sends it unvalidated), stays
under the row limit, has axis titles, uses the page's colours, and draws its
legend texts (rendered through vl-convert, which runs the spec's transforms).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from charts.f_divergences import (
    EXACT,
    F_COLORS,
    K2_LABEL,
    KL_LABEL,
    QUADRATIC,
    divergence_along_path,
    f_curves,
    f_label,
    k2_against_kl,
    k2_relative_bias,
)
from charts.histograms import MAX_ROWS
from charts.palette import COLORS, color
from kl_core.estimation import fisher
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.estimators import bregman
from kl_core.estimation.paths import PATHS
from kl_core.estimation.published import SCHULMAN_2020

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/f-divergences.py"
DEFAULT_F = ["kl_qp", "k2", "pearson", "hellinger"]


def open_page(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update(query)
    return at.run()


@pytest.fixture(scope="module")
def default_page() -> AppTest:
    """The page at its defaults (shared: these tests only read it)."""
    return open_page()


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def specs(at: AppTest) -> list[dict]:
    """Each chart's spec as sent (0: k2's relative bias, the answer's chart; 1: the f curves; 2: the
    path; 3: E[k2] and KL), with its datasets read back from the Arrow bytes on the proto."""
    out = []
    for c in at.get("vega_lite_chart"):
        spec = json.loads(c.proto.spec)
        spec["datasets"] = {
            d.name: pa.ipc.open_stream(d.data.data).read_pandas().to_dict("records")
            for d in c.proto.datasets
        }
        _inline_datasets(spec, spec["datasets"])  # lab.ui writes rows inline, named
        out.append(spec)
    return out


def _inline_datasets(node, found: dict) -> None:
    if isinstance(node, dict):
        if "name" in node and isinstance(node.get("values"), list):
            found.setdefault(node["name"], node["values"])
        for v in list(node.values()):
            _inline_datasets(v, found)
    elif isinstance(node, list):
        for v in node:
            _inline_datasets(v, found)


def table(at: AppTest, first_column: str):
    (df,) = [d.value for d in at.dataframe if d.value.columns[0] == first_column]
    return df


def registry_table(at: AppTest) -> dict[str, list[str]]:
    """The Markdown table of section 1: name → its cells."""
    (md,) = [m.value for m in at.markdown if m.value.startswith("| | f-divergence |")]
    rows = [line.strip("|").split("|") for line in md.splitlines()[2:]]
    return {cells[1].strip(): [c.strip() for c in cells] for cells in rows}


def number(cell: str) -> float:
    return float(cell.replace("−", "-"))


# ------------------------------------------------------------------ the page


def test_default_run_is_clean_and_draws_four_charts(default_page):
    clean(default_page)
    assert default_page.title[0].value == "f-divergences & Fisher"
    assert len(default_page.get("vega_lite_chart")) == 4
    assert default_page.toggle(key="tan").value is False
    assert default_page.segmented_control(key="path").value == "shift"
    assert default_page.segmented_control(key="view").value == "values"
    assert default_page.multiselect(key="f").value == DEFAULT_F
    assert default_page.slider(key="th_shift").value == (-3.0, 3.0)
    assert not default_page.warning


def test_the_f_table_is_the_registry(default_page):
    rows = registry_table(default_page)
    assert set(rows) == {d.name for d in DIVERGENCES.values()}
    for d in DIVERGENCES.values():
        cells = rows[d.name]
        if d.f2_at_1 is None:  # total variation: a kink at 1
            assert cells[4] == "—" and "kink" in cells[5]
        else:
            assert number(cells[4]) == d.fprime_at_1
            assert number(cells[5]) == d.f2_at_1
        assert cells[2].startswith("$") and cells[3].startswith("$")  # rendered as maths
    assert number(rows["KL[q‖p]"][5]) == number(rows[DIVERGENCES["k2"].name][5]) == 1.0


def test_the_end_table_is_the_core_at_the_range_ends(default_page):
    df = table(default_page, "f-divergence")
    assert list(df["f-divergence"]) == [f_label(k) for k in DEFAULT_F for _ in (0, 1)]
    for key in DEFAULT_F:
        curve = fisher.fisher_curve("shift", key, [-3.0, 3.0])
        rows = df[df["f-divergence"] == f_label(key)]
        assert list(rows["θ"]) == [-3.0, 3.0]
        np.testing.assert_array_equal(rows["D_f(p_θ, p₀)"], curve.exact)
        np.testing.assert_array_equal(rows["½ f″(1) F θ²"], curve.quadratic)
        np.testing.assert_array_equal(rows["ratio"], curve.ratio)
    kl = df[df["f-divergence"] == "KL[q‖p]"]
    assert list(kl["D_f(p_θ, p₀)"]) == pytest.approx([4.5, 4.5], rel=1e-12)  # θ²/2


def test_schulmans_points_are_the_core_numbers(default_page):
    df = table(default_page, "q")
    assert list(df["p"]) == [e.p.name for e in SCHULMAN_2020]
    b = fisher.k2_bias_along_path("shift", [0.1, 1.0])
    np.testing.assert_array_equal(df["KL[q‖p]"], b.kl)
    np.testing.assert_array_equal(df["E[k2]"], b.mean_k2)
    np.testing.assert_array_equal(df["(E[k2] − KL)/KL"], b.relative_bias)
    assert df["(E[k2] − KL)/KL"].tolist() == pytest.approx([0.0025, 0.25], rel=1e-9)
    assert list(df["Schulman's printed k2 bias/true"]) == ["0.002", "0.25"]


def test_the_two_points_are_marked_on_the_bias_chart(default_page):
    bias_chart = specs(default_page)[0]
    marks = bias_chart["datasets"]["marks"]
    assert [m["text"] for m in marks] == ["μ = 0.1: 0.0025", "μ = 1: 0.25"]
    assert [m["theta"] for m in marks] == [0.1, 1.0]
    assert [m["value"] for m in marks] == pytest.approx([0.0025, 0.25], rel=1e-9)


def test_path_chart_holds_the_core_curves(default_page):
    spec = specs(default_page)[2]
    rows = spec["datasets"]["curves"]
    assert len(rows) <= MAX_ROWS
    grid = fisher.fisher_curve("shift", "pearson", [1.0])
    # row values are the core's numbers; f and curve travel as codes
    pearson = DEFAULT_F.index("pearson")
    (row,) = [r for r in rows if r["f_i"] == pearson and r["theta"] == 1.0 and r["curve_i"] == 0]
    assert row["value"] == grid.exact[0]


def test_toggle_subtracts_the_tangent():
    at = open_page()
    at.toggle(key="tan").set_value(True).run()
    clean(at)
    spec = specs(at)[1]
    assert spec["layer"][-1]["encoding"]["y"]["title"] == "f(u) − f′(1)·(u − 1)"
    # the KL[q‖p] curve is now k3's Bregman form: r − 1 − log r ≥ 0
    code = list(DIVERGENCES).index("kl_qp")
    vals = [r["value"] for r in spec["datasets"]["f"] if r["f_i"] == code]
    assert min(vals) >= 0.0
    u = np.array([r["u"] for r in spec["datasets"]["f"] if r["f_i"] == code])
    np.testing.assert_allclose(vals, bregman("kl_qp", np.log(u)), rtol=1e-12)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("view", ["values", "ratio"])
def test_every_path_and_view_runs(path, view):
    at = open_page()
    at.segmented_control(key="path").set_value(path).run()
    at.segmented_control(key="view").set_value(view).run()
    clean(at)
    top = PATHS[path].theta_max
    assert at.slider(key=f"th_{path}").value == pytest.approx((-top, top))
    assert len(at.get("vega_lite_chart")) == 4
    df = table(at, "f-divergence")
    curve = fisher.fisher_curve(path, "k2", [-top, top])
    rows = df[df["f-divergence"] == f_label("k2")]
    if (df["D_f(p_θ, p₀)"] == "∞").any():
        # another f is infinite at an end: the column is text in its format (lab.format.printf_text_column)
        assert rows["D_f(p_θ, p₀)"].tolist() == [f"{x:.6g}" for x in curve.exact]
    else:
        np.testing.assert_array_equal(rows["D_f(p_θ, p₀)"], curve.exact)


def test_infinite_chi2_on_the_scale_path_is_explained():
    at = open_page(path="Gaussian scale change")
    clean(at)
    assert any("σ² < 2" in i.value for i in at.info)
    title = specs(at)[2]["title"]
    assert any("Pearson χ²: finite at θ = 0.34, infinite from θ = 0.36" in s for s in title["subtitle"])
    ends = table(at, "f-divergence")  # ∞ as the sign, not the browser's "Infinity"
    assert ends[ends["f-divergence"] == f_label("pearson")]["D_f(p_θ, p₀)"].tolist()[-1] == "∞"


def test_no_infinity_note_when_the_range_avoids_it():
    at = open_page(path="Gaussian scale change", th_scale=["-0.3", "0.3"])
    clean(at)
    assert not any("σ² < 2" in i.value for i in at.info)
    assert not any("infinite" in line for line in specs(at)[2]["title"].get("subtitle", []))


def test_range_slider_narrows_every_path_chart():
    at = open_page()
    at.slider(key="th_shift").set_value((0.05, 1.2)).run()
    clean(at)
    for spec in (s for i, s in enumerate(specs(at)) if i != 1):  # 1: the f curves
        layer = next(lay for lay in spec["layer"] if "x" in lay.get("encoding", {}) and "title" in lay["encoding"]["x"])
        assert layer["encoding"]["x"]["scale"]["domain"] == [0.05, 1.2]
    df = table(at, "f-divergence")
    assert sorted(set(df["θ"])) == [0.05, 1.2]
    b = fisher.k2_bias_along_path("shift", [0.05, 1.2])
    assert at.slider(key="th_shift").value == (0.05, 1.2)
    theta_rows = [r for r in specs(at)[0]["datasets"]["bias"] if r["theta"] in (0.05, 1.2)]
    assert [r["relative_bias"] for r in theta_rows] == pytest.approx(list(b.relative_bias), rel=1e-12)
    # μ = 0.1 and 1 are inside: both marked
    assert len(specs(at)[0]["datasets"]["marks"]) == 2


def test_a_range_without_the_marks_says_where_they_are():
    at = open_page()
    at.slider(key="th_shift").set_value((-1.0, 0.0)).run()
    clean(at)
    assert specs(at)[0]["datasets"].get("marks", []) == []  # no layer draws a mark
    assert any("Widen the θ range to see μ = 0.1 and μ = 1" in m.value for m in at.markdown)


def test_a_single_point_range_and_no_f_still_run():
    at = open_page()
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "leave 0 together" in text and "hugs its dashed parabola" in text  # on a range: both captions
    at.slider(key="th_shift").set_value((0.5, 0.5)).run()
    clean(at)
    assert any("single point" in i.value for i in at.info)
    # one θ is no line: neither the path chart nor E[k2] against KL is drawn, nor captioned as lines
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "hugs its dashed parabola" not in text and "leave 0 together" not in text
    assert len(at.get("vega_lite_chart")) == 2  # the f curves of part 1 and k2's relative bias
    at.multiselect(key="f").set_value([]).run()
    clean(at)
    assert any("Pick at least one" in i.value for i in at.info)
    assert len(at.get("vega_lite_chart")) == 2


def test_all_smooth_fs_can_be_drawn():
    at = open_page()
    at.multiselect(key="f").set_value(list(fisher.smooth_divergences())).run()
    clean(at)
    assert len(table(at, "f-divergence")) == 2 * len(fisher.smooth_divergences())


def test_a_link_sets_every_widget():
    at = open_page(
        tan="true",
        path="Categorical logit direction",
        view="D_f ÷ parabola",
        f=["KL[p‖q]", "Jensen–Shannon"],
        th_logit=["-1", "2"],
    )
    clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert at.toggle(key="tan").value is True
    assert at.segmented_control(key="path").value == "logit"
    assert at.segmented_control(key="view").value == "ratio"
    assert at.multiselect(key="f").value == ["kl_pq", "js"]
    assert at.slider(key="th_logit").value == (-1.0, 2.0)
    assert sorted(set(table(at, "f-divergence")["θ"])) == [-1.0, 2.0]


def test_a_link_with_the_range_ends_swapped_still_draws_the_range():
    at = open_page(th_shift=["1.5", "-0.5"])
    clean(at)
    assert sorted(set(table(at, "f-divergence")["θ"])) == [-0.5, 1.5]
    assert specs(at)[2]["layer"][0]["encoding"]["x"]["scale"]["domain"] == [-0.5, 1.5]


@pytest.mark.parametrize(("param", "bad"), [("path", "sideways"), ("view", "pie"), ("f", "total variation"), ("tan", "maybe")])
def test_a_bad_link_value_falls_back_with_a_note(param, bad):
    at = open_page(**{param: bad})
    clean(at)
    assert any(f"{param}={bad}" in w.value for w in at.warning), [w.value for w in at.warning]
    assert len(at.get("vega_lite_chart")) == 4


# ------------------------------------------------------------------ the builders


SHIFT_GRID = np.linspace(-3, 3, 61)


def _curves(path="shift", keys=DEFAULT_F, thetas=SHIFT_GRID):
    return [fisher.fisher_curve(path, k, thetas) for k in keys]


def _valid(chart) -> dict:
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    json.dumps(spec, allow_nan=False)
    assert all(len(rows) <= MAX_ROWS for rows in spec["datasets"].values())
    assert spec["config"]["axis"]["labelFontSize"] >= 13
    return spec


def _titles(spec) -> tuple[set, set]:
    xs = {lay["encoding"]["x"].get("title") for lay in spec["layer"] if "x" in lay.get("encoding", {})}
    ys = {lay["encoding"]["y"].get("title") for lay in spec["layer"] if "y" in lay.get("encoding", {})}
    return xs - {None}, ys - {None}


def _svg_text(chart) -> str:
    from lab.export import to_svg

    return to_svg(chart)


def test_colours_follow_the_estimator_palette():
    assert set(F_COLORS) == set(DIVERGENCES)
    assert len(set(F_COLORS.values())) == len(F_COLORS)
    assert F_COLORS["k2"] == color("k2")
    assert F_COLORS["kl_qp"] == color("k3")
    assert F_COLORS["kl_pq"] == color("k3_pq")
    others = {F_COLORS[k] for k in ("pearson", "hellinger", "js", "tv")}
    assert not others & set(COLORS.values())  # no f borrows another estimator's colour


@pytest.mark.parametrize("tangent", [False, True])
def test_f_curves_builder(tangent):
    u = np.linspace(0.2, 3.0, 113)
    with np.errstate(divide="ignore"):
        vals = {
            k: bregman(k, np.log(u)) if tangent and d.fprime_at_1 is not None else d.f(u)
            for k, d in DIVERGENCES.items()
        }
    chart = f_curves(u, vals, tangent_removed=tangent)
    spec = _valid(chart)
    xs, ys = _titles(spec)
    assert xs == {"u = p(x) / q(x), the likelihood ratio"} and ys
    assert len(spec["datasets"]["f"]) == 7 * u.size
    assert all(isinstance(v, float) for r in spec["datasets"]["f"][:5] for v in r.values())
    svg = _svg_text(chart)
    for d in DIVERGENCES.values():  # the legend names come back from the codes
        assert d.name.replace("&", "&amp;") in svg
    # seven f's: each has its own dash pattern or colour-and-pattern pair, in one legend
    line = next(layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "line")
    dash = line["encoding"]["strokeDash"]
    colours, dashes = line["encoding"]["color"]["scale"]["range"], dash["scale"]["range"]
    pairs = set(zip(colours, map(tuple, dashes), strict=True))
    assert len(pairs) == 7 and len({tuple(d) for d in dash["scale"]["range"]}) >= 4
    assert dash["scale"]["domain"] == line["encoding"]["color"]["scale"]["domain"]


@pytest.mark.parametrize("ratio", [False, True])
def test_divergence_along_path_builder(ratio):
    chart = divergence_along_path(_curves(), lo=-3, hi=3, theta_title="θ = μ", ratio=ratio)
    spec = _valid(chart)
    xs, ys = _titles(spec)
    assert xs == {"θ = μ"} and ys
    svg = _svg_text(chart)
    assert "Pearson χ²" in svg and "leaves the top" in svg  # χ² reaches e⁹ − 1
    if not ratio:
        assert EXACT in svg and QUADRATIC in svg
        assert F_COLORS["pearson"].lower() in svg.lower()


def test_divergence_along_path_keeps_the_range_and_merges_the_ends():
    grid = _curves(thetas=np.linspace(-3, 3, 13))
    ends = _curves(thetas=[-0.33, 1.27])
    spec = _valid(divergence_along_path(grid + ends, lo=-0.33, hi=1.27, theta_title="θ"))
    thetas = sorted({r["theta"] for r in spec["datasets"]["curves"]})
    assert thetas[0] == -0.33 and thetas[-1] == 1.27
    assert all(-0.33 <= t <= 1.27 for t in thetas)


def test_divergence_along_path_names_infinite_values():
    curves = _curves("scale", ["pearson", "kl_qp"], np.linspace(-0.6, 0.6, 61))
    spec = _valid(divergence_along_path(curves, lo=-0.6, hi=0.6, theta_title="θ"))
    assert any("infinite from θ = 0.36" in s for s in spec["title"]["subtitle"])
    assert all(np.isfinite(r["value"]) for r in spec["datasets"]["curves"])  # inf rows dropped


def test_k2_builders():
    th = np.linspace(-3, 3, 61)
    b = fisher.k2_bias_along_path("shift", th)
    left = k2_against_kl([b], lo=-3, hi=3, theta_title="θ = μ")
    spec = _valid(left)
    assert _titles(spec)[0] == {"θ = μ"}
    svg = _svg_text(left)
    assert K2_LABEL in svg and KL_LABEL in svg
    marks = [(0.1, 0.0025, "μ = 0.1: 0.0025"), (1.0, 0.25, "μ = 1: 0.25"), (9.0, 1.0, "off the chart")]
    right = k2_relative_bias([b], lo=-3, hi=3, theta_title="θ = μ", marks=marks)
    spec = _valid(right)
    assert [m["text"] for m in spec["datasets"]["marks"]] == ["μ = 0.1: 0.0025", "μ = 1: 0.25"]
    assert _titles(spec)[1] == {"(E[k2] − KL) / KL"}
    assert "μ = 1: 0.25" in _svg_text(right)
    # the NaN at θ = 0 (KL = 0) is dropped, not sent as NaN
    assert all(np.isfinite(r["relative_bias"]) for r in spec["datasets"]["bias"])


def test_builders_accept_empty_input():
    _valid(divergence_along_path([], lo=0.0, hi=1.0, theta_title="θ"))
    _valid(k2_against_kl([], lo=0.0, hi=1.0, theta_title="θ"))
    _valid(k2_relative_bias([], lo=0.0, hi=1.0, theta_title="θ"))


def test_labels_are_the_core_names():
    for key, d in DIVERGENCES.items():
        assert f_label(key) == d.name
    with pytest.raises(ValueError, match="key must be one of"):
        f_label("nope")


def test_the_page_opens_with_its_answer(default_page):
    """Issue 20: the question, the answer from the relative bias, then its chart (the first drawn)."""
    texts = [m.value for m in default_page.markdown]
    assert texts[0].startswith("**How far from q does k2")
    assert "within 10% of the KL for θ from -0.6 to 0.6" in texts[1]
    assert specs(default_page)[0]["datasets"]["marks"]  # the first chart is k2's relative bias


def test_the_opening_does_not_say_k2_always_misses_the_kl(default_page):
    """k2 is exactly unbiased at θ ≈ 1.58 on the logit path and at θ = 0: "in general"."""
    text = "\n".join(m.value for m in default_page.markdown)
    assert "k2 is **not** the KL: in general it averages to a different number." in text


def test_e_k2_and_kl_leave_0_only_where_the_range_shows_it():
    at = open_page(th_shift=["1", "3"])
    clean(at)
    text = "\n".join(m.value for m in at.markdown)
    assert "would leave 0 together at θ = 0, outside the range shown" in text
    assert "(KL) leave 0 together;" not in text
