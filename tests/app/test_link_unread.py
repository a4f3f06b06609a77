"""A link's parameter that the page does not read is named at the top of the page (``lab.state.check_link``).

Without the note, a typo, a setting a later version renamed, or a key of another page changed nothing
without a word, and the teammate who opened the link saw another view than its sender did.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
NOTE = "This link also set"


def _toy() -> None:
    """A page with one bound slider ``a`` that reads ``b`` itself."""
    from lab import state

    state.start_run()
    state.unread_note("toy")
    state.slider("A", "a", min_value=0, max_value=10, value=1, step=1)
    state.reads("b")
    state.check_link("toy")


def _notes(at: AppTest) -> list[str]:
    assert not at.exception, [e.value for e in at.exception]
    return [w.value for w in at.warning if NOTE in w.value]


def _toy_with(**query: str) -> AppTest:
    at = AppTest.from_function(_toy, default_timeout=30)
    at.query_params.update(query)
    return at.run()


def test_only_the_parameters_nothing_reads_are_named():
    (note,) = _notes(_toy_with(a="2", b="3", zz="4", lang="en"))
    assert "`zz=4`" in note and "it changes nothing" in note
    assert "a=" not in note and "b=" not in note and "lang" not in note


def test_several_and_repeated_parameters_are_each_named():
    at = AppTest.from_function(_toy, default_timeout=30)
    at.query_params["zz"] = ["1", "2"]
    at.query_params["yy"] = "x"
    (note,) = _notes(at.run())
    assert all(p in note for p in ("`zz=1`", "`zz=2`", "`yy=x`")) and "they change nothing" in note


def test_a_link_the_page_reads_whole_gets_no_note_and_the_note_stays_with_its_page():
    assert _notes(_toy_with(a="2", b="3")) == []
    at = _toy_with(zz="4")
    at.slider("a").set_value(5).run()  # later runs keep saying what the link set
    assert len(_notes(at)) == 1


def _page(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.query_params.update({"lang": "en", **query})
    return at.run()


@pytest.mark.parametrize(("page", "query"), [
    ("approx-kl", {"sc": "logp_policy"}),  # an old audit link: the page passes it on
    ("gradients", {"opt": "k3"}),  # the short option key of older links
    ("lessons", {"present": "1"}),  # presenter mode
])
def test_parameters_a_page_reads_itself_are_read(page, query):
    assert _notes(_page(page, **query)) == []


def test_a_real_page_names_a_mistyped_key():
    (note,) = _notes(_page("estimator-lab", n="500", seeed="3"))
    assert "`seeed=3`" in note and "n=500" not in note


def test_a_parameter_read_once_its_widget_is_shown_leaves_the_note():
    """/estimator-lab?lam=0.7 without kλ: λ is not read, and the note says so; choosing kλ then draws the λ
    slider at the link's 0.7, so the note must go (an audit found it kept saying "it changes nothing")."""
    at = _page("estimator-lab", lam="0.7")
    (note,) = _notes(at)
    assert "`lam=0.7`" in note
    at.multiselect("keys").select("k_lambda").run()  # draws the slider, reads λ, and runs again without the note
    assert _notes(at) == []
    assert at.slider("lam").value == 0.7


def test_a_repeated_parameter_is_one_setting():
    at = AppTest.from_function(_toy, default_timeout=30)
    at.query_params["zz"] = ["1", "2"]
    (note,) = _notes(at.run())
    assert "`zz=1`, `zz=2`" in note and "it changes nothing" in note
