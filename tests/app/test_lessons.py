"""The Lessons page: predictions are checked against kl_core, nothing shows before, variants and links."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kl_core.lessons import catalog as core
from lab.format import number

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/lessons.py"


def open_page(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update(query)
    return at.run()


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def press(at: AppTest, label: str) -> AppTest:
    return next(b for b in at.button if b.label == label).click().run()


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_nothing_is_revealed_before_an_answer() -> None:
    at = open_page()
    clean(at)
    q = core.question(1, 1, 0)
    assert at.header[0].value.startswith("Step 1 of 4")
    assert not at.metric and not at.success and not at.info
    assert not any(number(q.answer) in m.value for m in at.markdown)


def test_a_wrong_then_a_right_guess() -> None:
    at = open_page(lesson="2", step="1", v="17")
    q = core.question(2, 1, 17)
    assert q.params["p"] in " ".join(m.value for m in at.markdown).replace(r"\mathcal N(", "normal(").replace(", 1)", ",1)")
    at.text_input(key="typed-L2-S1-v17").input(str(q.answer * 3 + 0.1))
    at = press(at, "Check")
    assert at.error and "Not quite" in at.error[0].value
    assert metrics(at)["Exact value (kl_core)"] == number(q.answer)
    at.text_input(key="typed-L2-S1-v17").input(f"{q.answer:.6f}")
    at = press(at, "Check")
    clean(at)
    assert at.success and number(q.answer) in at.success[0].value
    assert any(pl.label.startswith("Explore this") for pl in at.get("page_link"))


def test_a_choice_step_and_show_me() -> None:
    at = open_page(lesson="5", step="3", v="2")
    q = core.question(5, 3, 2)
    wrong = next(k for k, _label in q.choices if k != q.answer)
    at.radio(key="chosen-L5-S3-v2").set_value(wrong)
    at = press(at, "Check")
    assert at.error and "Not quite" in at.error[0].value
    at = open_page(lesson="5", step="3", v="3")
    at = press(at, "Show me")
    clean(at)
    assert at.info and "The answer" in at.info[0].value


def test_a_number_is_required() -> None:
    at = open_page()
    at.text_input(key="typed-L1-S1-v0").input("about a half")
    at = press(at, "Check")
    assert at.warning and "Type a number" in at.warning[0].value
    assert not at.metric


def test_next_back_and_new_numbers() -> None:
    at = open_page(lesson="1", step="4")
    at = press(at, "Next")
    assert at.query_params["lesson"] == "2" and at.header[0].value.startswith("Step 1 of 5")
    at = press(at, "Back")
    assert at.query_params.get("lesson", "1") == "1" and at.query_params["step"] == "4"
    at = press(at, "New numbers")
    clean(at)
    v = int(at.query_params["v"])
    assert 1 <= v <= core.MAX_VARIANT
    assert any(f"v={v}" in c.value for c in at.caption)


def test_presenter_mode() -> None:
    at = open_page(present="1", lesson="3", step="2")
    clean(at)
    assert [t.value for t in at.title] == ["Step 2 of 5: The variance parabola"]  # one step per screen
    assert any("stSidebar" in h.body for h in at.get("html"))
    assert any(b.label == "Reveal the answer" for b in at.button)
    assert not at.metric  # hidden until revealed
    at = press(at, "Reveal the answer")
    assert at.info and metrics(at)["Exact value (kl_core)"] == number(core.question(3, 2, 0).answer)


@pytest.mark.parametrize("lesson_no", range(1, len(core.LESSONS) + 1))
def test_every_step_reveals_cleanly(lesson_no: int) -> None:
    at = open_page(lesson=str(lesson_no))
    for step in range(1, len(core.lesson(lesson_no).steps) + 1):
        if step > 1:
            at = press(at, "Next")
        clean(at)
        at = press(at, "Show me")
        clean(at)
        q = core.question(lesson_no, step, 0)
        assert at.info and core.question(lesson_no, step, 0).title in at.header[0].value
        if q.kind == "numeric":
            assert metrics(at)["Exact value (kl_core)"] == number(q.answer)


def test_progress_and_the_csv() -> None:
    at = open_page()
    at.text_input(key="typed-L1-S1-v0").input("0.245")
    at = press(at, "Check")
    at = press(at, "Next")
    at = press(at, "Show me")
    assert any("2 of 4 steps done, 1 right" in c.value for c in at.caption)
    assert "Download my answers (CSV)" in [b.proto.label for b in at.get("download_button")]


def test_chinese() -> None:
    at = open_page(lesson="4", step="4")
    at = at.button_group(key="lang").set_value("zh").run()  # the sidebar's language switch
    clean(at)
    assert at.header[0].value == "第 4 步（共 5 步）：翻转对数比率"
    at = press(at, "核对")  # Check, with nothing chosen
    assert at.warning and "请先选一个答案" in at.warning[0].value
    at = press(at, "显示答案")
    q = core.question(4, 4, 0)
    assert at.info and "答案" in at.info[0].value and "k_2" in at.info[0].value
    assert q.answer == "k2"


@pytest.mark.parametrize(("lesson_no", "step"), [(1, 4), (2, 5), (3, 5), (4, 3), (5, 5), (6, 1), (6, 3), (7, 1)])
def test_explore_links_open_the_same_setting(lesson_no: int, step: int) -> None:
    """The target page takes every value of the link (no "The link set …" note, and none it does not read)
    and shows the setting."""
    from lab.pages import page_by_url

    q = core.question(lesson_no, step, 3)
    path, query = q.explore
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(page_by_url(path).path)
    for key, value in query.items():
        at.query_params[key] = value
    at = at.run()
    clean(at)
    notes = [w.value for w in at.warning if "The link set" in w.value or "This link also set" in w.value]
    assert notes == []
    shown = at.query_params
    for key, value in query.items():
        got = shown.get(key)
        assert got is None or got == value or (isinstance(value, list) and got in value), (key, value, got)


def test_the_step_opens_with_the_lessons_point_and_its_setting() -> None:
    """Issue 20: the question, the lesson's point (not the answer) and the setting's chart at once."""
    at = open_page()
    clean(at)
    q = core.question(1, 1, 0)
    texts = [m.value for m in at.markdown]
    (point,) = [t for t in texts if t.startswith("**Lesson 1's point:**")]
    assert number(q.answer) not in point.split(":**")[1]
    (chart,) = at.get("vega_lite_chart")
    assert "q = N(0, 1) (samples)" in chart.proto.spec and "p = N(0.7, 1)" in chart.proto.spec
    assert at.number_input(key="v").value == 0  # the variant waits under "More settings"


def test_after_an_answer_the_steps_own_chart_follows_the_setting() -> None:
    at = press(open_page(lesson="1", step="2", v="0"), "Show me")
    clean(at)
    assert ["(samples)" in c.proto.spec for c in at.get("vega_lite_chart")] == [True, False]
    at = press(open_page(lesson="1", step="1", v="0"), "Show me")  # no chart of its own: the setting alone
    assert ["(samples)" in c.proto.spec for c in at.get("vega_lite_chart")] == [True]
    at = open_page(lesson="5", step="1", v="0")  # no q and p: π_θ and π_ref as bars beside the point
    (chart,) = at.get("vega_lite_chart")
    assert "tokens π_θ (filled" in json.loads(chart.proto.spec)["description"] and any("Lesson 5's point" in m.value for m in at.markdown)
    at = open_page(lesson="4", step="5", v="0")  # one log r: no picture, it would show the answer
    assert not at.get("vega_lite_chart")


def test_lesson_0_and_step_0_in_a_link_are_named_not_read_as_the_first() -> None:
    """The options are numbers, so "0" is no option's index: ?lesson=0 and ?step=0 showed lesson 1 step 1
    without a word, while ?lesson=99 got a note."""
    for query, key in (({"lesson": "0"}, "lesson=0"), ({"lesson": "2", "step": "0"}, "step=0")):
        at = open_page(**query)
        clean(at)
        assert any(key in w.value and "can't use" in w.value for w in at.warning), [w.value for w in at.warning]
    at = open_page(lesson="2", step="3")
    clean(at)
    assert not any("can't use" in w.value for w in at.warning)
