"""One look per estimator (issue 17): every chart every page draws takes each estimator's
colour, line dash and point shape from ``charts.palette``, and never tells two estimators
apart by colour alone (issue 21).

Every page runs (``AppTest``) at its defaults and at links that switch other charts on, as in
``tests/charts/test_chart_spec.py``; each chart handed to ``lab.ui.chart`` is turned into its
Vega-Lite spec (``to_dict``) and walked layer by layer.  A *series* is one colour of a layer:
each entry of a colour scale (with the dash and shape the same field gets in that layer), or
the layer's constant mark colour.  A series in an estimator's colour is that estimator's
(the estimator colours are reserved for the estimators, ``charts.palette``), and

* a line, or a rule drawn with a dash, must have that estimator's dash;
* a point must have its shape;
* a series named like an estimator (``ESTIMATORS[key].name``) must have its colour;
* two estimator series of one chart in different colours must differ in dash (lines) or in
  shape (points) as well.

:data:`ROLES` lists the charts where a dash or a shape means something else (the clamped and
unclamped lines of one estimator, a parabola against the exact line, ...): there only the
colours are checked, and each entry says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from charts import palette
from charts.estimator_lab import running_means_chart
from kl_core.estimation.estimators import ESTIMATORS
from kl_core.sequences.estimators import SEQUENCE_ESTIMATORS
from lab import ui
from lab.pages import PAGES

APP = str(Path(__file__).resolve().parents[2] / "app.py")

LINKS = [(page.path, {}) for page in PAGES] + [
    ("pages/estimator-lab.py", {"keys": ["k1", "k2", "k3", "k_lambda", "k3_pq"]}),
    ("pages/estimator-lab.py", {"keys": ["k_lambda", "k3_pq"]}),
    ("pages/control-variates.py", {"lam": "1.5"}),
    ("pages/bregman-gap.py", {"f": "k2"}),
    ("pages/sequences.py", {"src": "rb counterexample"}),
    ("pages/sequences.py", {"src": "drift", "K": "40", "first": "true", "T": "256"}),
    ("pages/gradients.py", {"k": "9", "t": "2.5", "smp": "old", "option": "OpenRLHF:k3:reward"}),
]

#: Charts (page, regex on the chart's file name) where dashes or shapes play another role than
#: "which estimator": only colours are checked there.  Each says what the dash/shape means.
ROLES: list[tuple[str, str, str]] = [
    ("approx-kl", r"^clamps-", "one estimator three ways: the library's clamped mean solid, the "
     "unclamped estimator thick dots, the exact KL thin dashes (the page's caption says so)"),
    ("approx-kl", r"^clamp-hits-", "clamp lines: any clamp grey, the log-ratio clamp sky blue dashed; "
     "no estimator (the sky blue marks log r)"),
    ("config-doctor", r"^pull-", "a library option's pull solid against the two KL gradients' "
     "dashed and dotted pulls (the caption names the lines by their dash)"),
    ("bregman-gap", r"^bregman-", "one estimator's gaps: a thin solid segment and a dot per draw"),
    ("f-divergences", r"^f-divergences-", "dash tells the exact divergence (solid) from its "
     "parabola ½ f″(1) F θ² (dashed); the colour is the f"),
    ("gradients", r"^training-", "one line per token, coloured and dashed by token (TOKEN_COLORS "
     "and TOKEN_DASHES), not by estimator"),
    ("sequences", r"^relative-std-.*#(off|zero)", "triangles pointing up (off the chart) and "
     "down (= 0) mark where a line leaves the plot"),
]

#: The looks an estimator colour may have: its estimator's (and a sequence estimator's that
#: shares the colour, e.g. mean k3 per token in k3's green).
LOOKS: dict[str, list[palette.EstimatorStyle]] = {}
for _style in [*palette.STYLES.values(), *palette.SEQUENCE_STYLES.values()]:
    LOOKS.setdefault(_style.color.upper(), [])
    if _style not in LOOKS[_style.color.upper()]:
        LOOKS[_style.color.upper()].append(_style)

#: Series names that are an estimator's name: they must be drawn in its colour.
NAMED: dict[str, str] = {
    **{palette.label(k): palette.color(k) for k in ESTIMATORS},
    **{info.name: palette.color(k) for k, info in SEQUENCE_ESTIMATORS.items()},
}

SOLID = list(palette.SOLID)


@dataclass
class Series:
    """One colour of one layer of a chart."""

    where: str  # chart name and layer, for messages
    mark: str
    name: str | None
    color: str
    dash: list[float] | None  # None: the layer sets no dash (solid)
    dash_set: bool  # the layer sets a dash (constant or encoded)
    shape: str
    visible_points: bool


def _mark(layer: dict) -> dict:
    mark = layer.get("mark", {})
    return {"type": mark} if isinstance(mark, str) else dict(mark)


def _units(spec: dict, inherited: dict | None = None, path: str = "") -> Iterator[tuple[str, dict, dict]]:
    """Every unit layer of ``spec``: (its path, the layer, its encoding merged with its parents')."""
    encoding = {**(inherited or {}), **spec.get("encoding", {})}
    if "mark" in spec:
        yield path or "0", spec, encoding
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for i, child in enumerate(spec.get(key, [])):
            yield from _units(child, encoding, f"{path}/{key}{i}")


def _scale_lookup(channel: dict | None, field: str | None) -> dict[str, object] | None:
    if not channel or channel.get("field") != field:
        return None
    scale = channel.get("scale") or {}
    if isinstance(scale.get("domain"), list) and isinstance(scale.get("range"), list):
        return dict(zip(scale["domain"], scale["range"], strict=False))
    return None


def _drawn_values(spec: dict, layer: dict, field: str) -> set | None:
    """The values of ``field`` that ``layer`` draws: from its rows in ``spec["datasets"]`` (less
    those a ``filter`` with ``equal`` drops), or None when the rows do not hold it (a fold)."""
    rows = spec.get("datasets", {}).get((layer.get("data") or {}).get("name"))
    values = None
    if isinstance(rows, list) and rows and all(field in r for r in rows):
        values = {r[field] for r in rows}
    for t in layer.get("transform", []):
        if isinstance(t.get("filter"), dict) and t["filter"].get("field") == field and "equal" in t["filter"]:
            values = {t["filter"]["equal"]} & (values if values is not None else {t["filter"]["equal"]})
    return values


def _row_shapes(spec: dict, layer: dict, field: str, shape_field: str) -> dict[str, str]:
    """Shapes taken from the rows (``"shape": {"field": ..., "scale": None}``), per value of ``field``."""
    rows = spec.get("datasets", {}).get((layer.get("data") or {}).get("name")) or []
    found: dict[str, set] = {}
    for r in rows:
        if field in r and shape_field in r:
            found.setdefault(r[field], set()).add(r[shape_field])
    return {k: v.pop() if len(v) == 1 else f"several: {sorted(v)}" for k, v in found.items()}


def series_of(name: str, spec: dict) -> list[Series]:
    """The series of every layer of chart ``spec``."""
    out = []
    for path, layer, enc in _units(spec):
        mark = _mark(layer)
        data = (layer.get("data") or {}).get("name", "")
        where = f"{name}#{data}@{path}"
        const_dash = mark.get("strokeDash")
        shape = mark.get("shape", "circle")
        visible = mark.get("type") == "point" and mark.get("opacity", 1) > 0
        colour_channel = next((enc[c] for c in ("color", "stroke", "fill") if c in enc), None)
        colours = _scale_lookup(colour_channel, (colour_channel or {}).get("field"))
        if colours is not None:
            field = colour_channel["field"]
            dashes = _scale_lookup(enc.get("strokeDash"), field)
            shapes = _scale_lookup(enc.get("shape"), field)
            if shapes is None and isinstance(enc.get("shape"), dict) and enc["shape"].get("scale", 0) is None:
                shapes = _row_shapes(spec, layer, field, enc["shape"]["field"])
            drawn = _drawn_values(spec, layer, field)
            for entry, colour in colours.items():
                if drawn is not None and entry not in drawn:
                    continue  # in the shared scale, not in this layer
                dash = dashes.get(entry) if dashes is not None else const_dash
                out.append(Series(where, mark.get("type", ""), str(entry), str(colour), dash,
                                  dashes is not None or const_dash is not None,
                                  shapes.get(entry, shape) if shapes is not None else shape, visible))
        elif isinstance(mark.get("color"), str):
            out.append(Series(where, mark.get("type", ""), None, mark["color"], const_dash,
                              const_dash is not None, shape, visible))
    return out


def _role(page: str, where: str) -> str | None:
    for role_page, pattern, reason in ROLES:
        if role_page in page and re.search(pattern, where):
            return reason
    return None


def problems(page: str, name: str, spec: dict) -> list[str]:
    """Every way chart ``spec`` (file name ``name``, on ``page``) departs from the palette's looks."""
    found = []
    estimator_series = []
    for s in series_of(name, spec):
        if s.name in NAMED and s.color.upper() != NAMED[s.name].upper():
            found.append(f"{s.where}: {s.name!r} drawn in {s.color}, the palette says {NAMED[s.name]}")
        looks = LOOKS.get(s.color.upper())
        if looks is None or _role(page, s.where):
            continue
        dash = list(s.dash) if s.dash is not None else SOLID
        if s.mark in ("line", "trail") or (s.mark == "rule" and s.dash_set):
            if not any(dash == list(look.dash) for look in looks):
                found.append(f"{s.where}: {s.name or s.color} is a {s.mark} dashed {dash}, "
                             f"the palette says {[list(look.dash) for look in looks]}")
            estimator_series.append(("line", s, tuple(dash)))
        if s.mark == "point" and s.visible_points:
            if not any(s.shape == look.shape for look in looks):
                found.append(f"{s.where}: {s.name or s.color} has points of shape {s.shape!r}, "
                             f"the palette says {[look.shape for look in looks]}")
            estimator_series.append(("point", s, s.shape))
    # Colour never the only cue: two estimators of one chart differ in dash or shape too.
    for i, (kind, a, look_a) in enumerate(estimator_series):
        for kind_b, b, look_b in estimator_series[i + 1:]:
            if kind == kind_b and a.color.upper() != b.color.upper() and look_a == look_b:
                found.append(f"{a.where} and {b.where}: {a.name or a.color} and {b.name or b.color} "
                             f"differ by colour only ({kind} {look_a})")
    return found


def _charts_of(monkeypatch, path: str, query: dict) -> list[tuple[str, dict]]:
    """(file name, Vega-Lite spec) of every chart the page at ``path`` with ``query`` draws."""
    drawn = []
    real = ui.chart

    def spy(ch, *, name, **kwargs):
        drawn.append((name, ch.to_dict(validate=False)))
        return real(ch, name=name, **kwargs)

    monkeypatch.setattr(ui, "chart", spy)
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    if path != PAGES[0].path:
        at.switch_page(path)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return drawn


@pytest.mark.parametrize(("path", "query"), LINKS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(LINKS)])
def test_every_chart_draws_each_estimator_in_its_palette_look(monkeypatch, path, query):
    drawn = _charts_of(monkeypatch, path, query)
    assert drawn, f"{path} drew no chart"
    found = [p for name, spec in drawn for p in problems(path, name, spec)]
    assert not found, "\n".join(found)


def test_the_check_sees_a_wrong_dash_a_wrong_shape_and_a_colour_only_difference():
    runs = [(k, [1.0, 10.0, 100.0], [0.5, 0.4, 0.45], [0.1, 0.05, 0.02]) for k in ("k1", "k2", "k3")]
    spec = running_means_chart(runs, targets=[("KL[q‖p]", 0.45)]).to_dict(validate=False)
    assert problems("pages/estimator-lab.py", "lab-running-means", spec) == []
    lines = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "line")
    dashes = lines["encoding"]["strokeDash"]["scale"]
    k1 = dashes["domain"].index(palette.label("k1"))
    dashes["range"][k1] = list(palette.SOLID)  # k1 solid, as the Lab drew it before issue 17
    found = problems("pages/estimator-lab.py", "lab-running-means", spec)
    assert any("k1 is a line dashed [1, 0]" in p for p in found), found
    assert any("differ by colour only" in p for p in found), found  # solid like k3
    point = {"mark": {"type": "point"}, "encoding": {"color": {
        "field": "e", "scale": {"domain": ["k2", "k3"], "range": [palette.color("k2"), palette.color("k3")]}}}}
    found = problems("x", "points", {"layer": [point]})
    assert any("shape 'circle'" in p for p in found) and any("differ by colour only" in p for p in found)
    # a chart listed in ROLES: its dashes mean something else, only colours are checked
    assert problems("pages/approx-kl.py", "clamps-TRL-k3-x", spec) == []
    wrong_colour = {"mark": {"type": "bar"}, "encoding": {"color": {
        "field": "e", "scale": {"domain": ["k1"], "range": [palette.color("k2")]}}}}
    assert problems("x", "bars", wrong_colour) == [
        f"bars#@0: 'k1' drawn in {palette.color('k2')}, the palette says {palette.color('k1')}"]


def test_styles_cover_every_estimator_and_differ():
    assert set(palette.STYLES) == {*ESTIMATORS, "rb"}
    assert set(palette.SEQUENCE_STYLES) == set(SEQUENCE_ESTIMATORS)
    looks = list(palette.STYLES.values())
    for attr in ("color", "dash", "shape"):
        values = [getattr(s, attr) for s in looks]
        assert len(set(values)) == len(values), attr
    assert palette.REFERENCE_DASH not in [list(s.dash) for s in looks]
    # a sum of per-token terms looks like its term
    for key in ("k1", "k2", "k3"):
        assert palette.style(f"sum_{key}") == palette.style(key)
    scales = palette.scales(["a", "b"], ["k1", palette.STYLES["rb"]])
    assert scales["color"] == {"domain": ["a", "b"], "range": [palette.color("k1"), palette.RB_COLOR]}
    assert scales["strokeDash"]["range"] == [palette.dash("k1"), palette.dash("rb")]
    assert scales["shape"]["range"] == ["circle", "triangle-right"]
    with pytest.raises(ValueError, match="domain and keys"):
        palette.scales(["a"], ["k1", "k2"])


def test_each_estimator_look_is_declared_once_in_the_registry():
    """The palette reads every estimator's look from its registry entry, in registry order:
    a new estimator brings its colour, dash and shape along; nothing else lists them."""
    assert list(palette.STYLES) == [*ESTIMATORS, "rb"]
    for key, info in ESTIMATORS.items():
        assert palette.STYLES[key] == palette.EstimatorStyle(info.color, info.dash, info.shape)
        assert palette.COLORS[key] == info.color
