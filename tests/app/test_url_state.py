"""Issue 17 §5, "the link is what you see", at the AppTest level: after every widget change the
URL the server writes holds what the page shows.

AppTest has no browser, so nothing but the server writes ``at.query_params``
here: a bound widget changed by the user (N, the seed, a segmented control)
reaches the URL only through :func:`lab.state._write_url`.  In a real browser
Streamlit 1.67's own sync of those widgets gets lost once the widget is drawn
at a new place on the page (see that function), and the browser test
``tests/browser/test_link_state.py`` checks the whole page.  The picker's
sliders write the spec from their callbacks (``state.set_values``).
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def open_page(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": "en", **query})
    at.run()
    at = at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def url(at: AppTest) -> dict[str, object]:
    assert not at.exception, [e.value for e in at.exception]
    return dict(at.query_params)


def test_estimator_lab_sliders_and_fields_are_in_the_url_after_each_change():
    at = open_page("estimator-lab")
    for mu in (0.05, 0.1, 0.15):  # the three presses of → on q's μ
        at.slider("q.mu").set_value(mu).run()
        assert url(at)["q"] == f"normal({mu:g},1)"
    at.select_slider("n").set_value(500).run()  # a user's change of a bound widget
    assert url(at)["n"] == "500"
    at.number_input("seed").set_value(7).run()
    assert url(at)["seed"] == "7"
    at.select_slider("p.sigma").set_value(2).run()  # a log slider
    assert url(at)["p"] == "normal(0.1,2)"
    assert url(at)["n"] == "500" and url(at)["q"] == "normal(0.15,1)"
    at.select_slider("n").set_value(1000).run()  # back at the default: out of the URL
    assert "n" not in url(at)


def test_control_variates_and_bregman_gap_widgets_are_in_the_url():
    at = open_page("control-variates")
    at.slider("lam").set_value(2.0).run()
    assert url(at)["lam"] == "2"
    at.slider("p.mu").set_value(0.5).run()
    assert url(at)["p"] == "normal(0.5,1)" and url(at)["lam"] == "2"
    at = at.switch_page("pages/bregman-gap.py").run()
    at.slider("r").set_value(2.0).run()
    assert url(at)["r"] == "2"


def test_a_categorical_table_edit_and_a_typed_spec_are_in_the_url():
    at = open_page("estimator-lab", q="categorical(0,1,2)", p="categorical(1,1,1)")
    at.text_input("p").input("categorical(2,1,0)").run()
    assert url(at)["p"] == "categorical(2,1,0)"
    at.slider("q.logit2").set_value(3.0).run()
    assert url(at)["q"] == "categorical(0,1,3)"
