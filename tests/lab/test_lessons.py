"""lab.lessons.setting_figure: which steps get a picture of their setting, and that none gives its answer away.

The hard rule of the Lessons page: the picture beside a step's question (drawn
before Check or "Show me") never shows its answer, nor lets a reader read it
off.  :func:`test_no_setting_picture_shows_its_answer` checks every step that
has a picture, over every setting its variants serve: a picture and an answer
depend on the params alone, and the params come from a grid, so the step's
sampler is run for the first :data:`DRAWS` variants (the seeded draws
``kl_core.lessons.catalog.question`` makes) and every distinct setting that
makes the step's point is checked once.  The token steps' draws cover their
whole grid (:func:`test_the_token_settings_cover_their_whole_grid`), so every
variant up to MAX_VARIANT is one of the settings checked.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from functools import cache

import numpy as np
import pytest
from scipy import stats

from i18n import message, using
from kl_core.lessons import catalog as core
from kl_core.lessons.settings import SETTINGS, token_pair
from lab import lessons

ALL_STEPS = [(les.number, s) for les in core.LESSONS for s in range(1, len(les.steps) + 1)]
#: The steps with no picture before the answer, and why (kl_core.lessons.settings.token_pair).
NO_PICTURE = {
    (4, 4): "one log r: a curve of k1, k2, k3 would show the symmetric one",
    (4, 5): "one log r: a k3 curve would let k3(−log r) be read off",
    (6, 1): "β and T only, no chain",
    (6, 2): "KL / T lies among the token shares",
    **{(7, s): "the config is shown" for s in range(1, 5)},
}
PICTURED = [key for key in ALL_STEPS if key not in NO_PICTURE]
#: Variants whose draws are checked (the full grids are covered well before: see the module docstring).
DRAWS = 2000


def _rows(fig: lessons.Figure) -> list[dict]:
    """Every row of every dataset the chart carries (what a reader can hover, open or save)."""
    datasets = fig.chart.to_dict()["datasets"]
    return [row for rows in datasets.values() for row in rows]


_PICTURES: dict[str, list[dict]] = {}


def _picture_rows(q: core.Question) -> list[dict]:
    """:func:`_rows` of ``q``'s picture, built once per setting it reads (q and p, or the token params)."""
    reads = SETTINGS.get(q.setting, ("q", "p"))
    key = json.dumps([q.lesson, q.setting, {name: q.params[name] for name in reads}], sort_keys=True)
    if key not in _PICTURES:
        _PICTURES[key] = _rows(lessons.setting_figure(q))
    return _PICTURES[key]


@cache
def _settings(lesson: int, step: int) -> list[core.Question]:
    """One question per distinct setting that some variant serves (its params, answer and tolerance)."""
    st = core.lesson(lesson).steps[step - 1]
    base = core.question(lesson, step, 0)
    drawn = {json.dumps(st.sample(random.Random(core._seed(lesson, step, v))), sort_keys=True)
             for v in range(DRAWS)}
    out = []
    for text in sorted(drawn):
        params = json.loads(text)
        facts = core._facts(st, params)
        if not st.holds(facts):
            continue  # never served: question() draws again
        answer = facts["answer"]
        tol = max(st.tolerance[0], st.tolerance[1] * abs(float(answer))) if st.kind == "numeric" else None
        out.append(dataclasses.replace(base, params=params, answer=answer, tolerance=tol, facts=facts))
    served = {json.dumps(core.question(lesson, step, v).params, sort_keys=True) for v in range(0, 20)}
    assert served <= {json.dumps(q.params, sort_keys=True) for q in out}  # the enumeration covers what is served
    return out


def test_which_steps_have_a_picture() -> None:
    for lesson, step in ALL_STEPS:
        fig = lessons.setting_figure(core.question(lesson, step, 3))
        assert (fig is None) == ((lesson, step) in NO_PICTURE), (lesson, step)


def leaks(q: core.Question, rows: list[dict]) -> list[str]:
    """How the picture's ``rows`` would give ``q``'s answer away (empty: they do not)."""
    found = []
    fields = set().union(*(row.keys() for row in rows))
    # 1. no field named after what is asked
    if fields & {q.quantity, "answer", *q.facts}:
        found.append(f"a field is named after the answer: {sorted(fields & {q.quantity, 'answer', *q.facts})}")
    if q.kind == "choice":
        # 2. a choice: neither the right key nor its label anywhere in the data
        words = {str(q.answer), message(q.correct_label), str(q.correct_label)}
        found += [f"the data holds {w!r}" for w in {v for row in rows for v in row.values() if isinstance(v, str)} & words]
    elif q.setting:
        # 3. a number: no plotted value within the answer's tolerance, unless the setup gives it
        givens = [float(v) for v in q.params.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        found += [f"{field} = {value:.6g} is within ± {q.tolerance:.3g} of the answer {q.answer:.6g}"
                  for row in rows for field, value in row.items()
                  if isinstance(value, (int, float)) and not isinstance(value, bool)
                  and abs(value - float(q.answer)) <= q.tolerance and not any(math.isclose(value, g) for g in givens)]
    else:
        # 3'. q and p as densities: a curve passes every value between its ends, so the check is
        # that the data is the setup's two named distributions and nothing else (givens of the setup)
        if fields != {"x", "density", "curve"}:
            return [*found, f"a density picture with the fields {sorted(fields)}"]
        x = np.array([row["x"] for row in rows])
        want = np.concatenate([_pdf(q.params["q"], x[: len(x) // 2]), _pdf(q.params["p"], x[len(x) // 2:])])
        if not np.allclose([row["density"] for row in rows], want, rtol=1e-9, atol=1e-300):
            found.append("the curves are not the setup's q and p")
    return found


@pytest.mark.parametrize(("lesson", "step"), PICTURED, ids=[f"L{les}S{s}" for les, s in PICTURED])
def test_no_setting_picture_shows_its_answer(lesson: int, step: int) -> None:
    checked = 0
    for q in _settings(lesson, step):
        rows = _picture_rows(q)
        assert 0 < len(rows) <= 5000
        assert leaks(q, rows) == [], q.params
        checked += 1
    assert checked >= 5


def test_the_check_sees_a_planted_answer() -> None:
    numeric = core.question(5, 1, 0)  # answer 0, ± 0.01
    rows = _rows(lessons.setting_figure(numeric))
    assert leaks(numeric, rows) == []
    assert leaks(numeric, [*rows, {"token": "0", "series": "x", "value": 0.004}])
    assert leaks(numeric, [{**rows[0], "grad_norm": 1.0}])
    choice = core.question(5, 3, 0)
    assert leaks(choice, [*rows, {"token": "0", "series": message(choice.correct_label), "value": 0.5}])
    density = core.question(1, 1, 0)
    rows = _rows(lessons.setting_figure(density))
    assert leaks(density, rows) == []
    assert leaks(density, [{**row, "kl": density.answer} for row in rows])
    assert leaks(density, [{**row, "density": row["density"] * 1.01} for row in rows])


def test_lesson_6_step_2_would_leak_with_the_chains_picture() -> None:
    """Why it has none: its answer, KL / T, lies within 5% of a token share in some of its settings."""
    leaking = []
    for q in _settings(6, 2):
        pair = token_pair("chains", q.params)
        rows = [{"token": str(i), "series": name, "value": float(v)}
                for name, values in (("policy", pair.sampled), ("reference", pair.reference))
                for i, v in enumerate(values)]
        if leaks(dataclasses.replace(q, setting="chains"), rows):
            leaking.append(q.params)
    assert len(leaking) >= 10


def _pdf(spec: str, x: np.ndarray) -> np.ndarray:
    """The density of a normal spec, by scipy (the lessons' q and p are normals)."""
    family, args = spec.split("(")
    mu, sigma = (float(a) for a in args.rstrip(")").split(","))
    assert family == "normal"
    return stats.norm(mu, sigma).pdf(x)


def test_the_token_settings_cover_their_whole_grid() -> None:
    """Lesson 5 draws k ∈ 4…8 and s ∈ 0.5…1.5 (25 settings); lesson 6, 3 × 11 × 5 = 165 chains."""
    assert len({(q.params["k"], q.params["t"]) for q in _settings(5, 1)}) == 25
    assert len({(q.params["K"], q.params["drift"], q.params["T"]) for q in _settings(6, 3)}) == 165


def test_the_policies_picture_plots_the_two_policies() -> None:
    q = core.question(5, 2, 11)
    fig = lessons.setting_figure(q)
    pair = token_pair("policies", q.params)
    rows = _rows(fig)
    assert len(rows) == 2 * q.params["k"]
    by_series: dict[str, list[float]] = {}
    for row in rows:
        by_series.setdefault(row["series"], []).append(row["value"])
    assert list(by_series) == ["π_θ (tokens are drawn from it)", "π_ref (uniform)"]
    np.testing.assert_allclose(list(by_series.values()), [pair.sampled, pair.reference])
    assert fig.name == "lesson-5-2-setting"
    assert "{t:g}".format(t=q.params["t"]) in fig.caption and "Look at" in fig.caption


def test_the_chains_picture_says_what_its_bars_are() -> None:
    q = core.question(6, 4, 2)
    fig = lessons.setting_figure(q)
    assert {row["series"] for row in _rows(fig)} == {"policy (sequences come from it)", "reference chain"}
    assert f"T = {q.params['T']}" in fig.caption and "{d:g}".format(d=q.params["drift"]) in fig.caption
    spec = fig.chart.to_dict()
    assert spec["encoding"]["y"]["title"] == "share of the T tokens" and spec["encoding"]["x"]["title"] == "token"


@pytest.mark.parametrize("step", [3, 4])
def test_the_chains_caption_is_true_at_every_served_setting(step: int) -> None:
    """The caption says the tilt moves the policy towards the low-numbered tokens: at every setting
    the policy's cumulative token shares lie at or above the reference chain's, strictly at token 0."""
    for q in _settings(6, step):
        pair = token_pair("chains", q.params)
        above = np.cumsum(pair.sampled)[:-1] - np.cumsum(pair.reference)[:-1]
        assert pair.sampled[0] > pair.reference[0] and (above >= -1e-12).all(), q.params


def test_the_pictures_speak_chinese() -> None:
    with using("zh"):
        for lesson, step in ((5, 1), (6, 3), (1, 1)):
            fig = lessons.setting_figure(core.question(lesson, step, 0))
            spec = json.dumps(fig.chart.to_dict(), ensure_ascii=False)
            assert not any(w in spec for w in ("tokens are drawn", "sequences come", '"title": "probability"'))
            assert not any(w in fig.caption for w in ("Look at", "Each token", "is drawn from"))
            assert any("\u4e00" <= ch <= "\u9fff" for ch in fig.caption)


def test_the_share_link_carries_the_language_shown():
    """The zh page's 'This variant's link' had no lang=zh: opened elsewhere, the same step came up in English."""
    q = core.question(5, 3, 12)
    for lang in ("en", "zh"):
        with using(lang):
            assert lessons.share_link(q, False) == f"/lessons?lesson=5&step=3&v=12&lang={lang}"
            assert lessons.share_link(q, True) == f"/lessons?lesson=5&step=3&v=12&present=1&lang={lang}"
