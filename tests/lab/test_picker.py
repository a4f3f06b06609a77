"""lab.picker in AppTest: sliders, typed spec and URL agree; family and vocabulary changes stay comparable."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest


def _pair_script():
    import streamlit as st

    from lab.picker import distribution_pair

    q, p = distribution_pair("normal(0,1)", "normal(1,1)")
    st.write(f"picked {q.spec} {p.spec}")


def run(**query: str) -> AppTest:
    at = AppTest.from_function(_pair_script, default_timeout=30)
    at.query_params.update(query)
    return at.run()


def picked(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    return next(m.value for m in at.markdown if m.value.startswith("picked"))


def test_sliders_start_from_the_spec_and_write_it_back():
    at = run()
    assert at.selectbox(key="q.family").value == "normal"
    assert at.slider(key="p.mu").value == 1.0 and at.select_slider(key="p.sigma").value == 1.0
    at.slider(key="p.mu").set_value(0.25).run()
    assert at.text_input(key="p").value == "normal(0.25,1)"
    assert picked(at) == "picked normal(0,1) normal(0.25,1)"
    at.select_slider(key="q.sigma").set_value(2.5).run()
    assert picked(at) == "picked normal(0,2.5) normal(0.25,1)"
    assert any("N(0, 2.5²), written `normal(0,2.5)` in the link" in c.value for c in at.caption)


def test_a_typed_spec_reseeds_the_sliders():
    at = run()
    at.text_input(key="q").input("t(5,0.5,2)").run()
    assert picked(at) == "picked t(5,0.5,2) normal(1,1)"
    assert at.selectbox(key="q.family").value == "t"
    assert at.select_slider(key="q.df").value == 5.0
    assert at.slider(key="q.loc").value == 0.5
    assert at.select_slider(key="q.scale").value == 2.0


def test_a_link_value_off_the_slider_range_is_kept_exactly():
    at = run(q="normal(0,1e-5)", p="normal(12,1)")
    assert picked(at) == "picked normal(0,1e-05) normal(12,1)"
    assert at.select_slider(key="q.sigma").value == 1e-5
    assert at.slider(key="p.mu").value == 12.0 and at.slider(key="p.mu").max == 12.0
    # moving another slider of q leaves its off-range σ alone
    at.slider(key="q.mu").set_value(0.5).run()
    assert picked(at) == "picked normal(0.5,1e-05) normal(12,1)"


def test_switching_q_to_categorical_switches_p_to_the_same_vocabulary():
    at = run()
    at.selectbox(key="q.family").set_value("categorical").run()
    assert picked(at) == "picked categorical(2,1,0.5,0,-1) categorical(1,0.5,0.5,0.5,0)"
    assert at.selectbox(key="p.vocab").value == "logit"
    at.selectbox(key="p.vocab").set_value("peaked").run()
    text = picked(at)
    assert text.startswith("picked categorical(2,1,0.5,0,-1,-2,-3,-19.5) ")  # q follows, 8 tokens
    assert text.endswith(" categorical(2,1,0.5,0,-1,-2,-3,0.5)")  # p: the rare token raised by 20
    assert at.selectbox(key="q.token").value == 7 and at.selectbox(key="p.token").value == 7
    # and back to a continuous family: the other side follows, away from q
    at.selectbox(key="q.family").set_value("laplace").run()
    assert picked(at) == "picked laplace(0,1) normal(0.5,1)"


def test_the_logit_slider_moves_the_chosen_token():
    at = run(q="categorical(2,1,0.5,0,-1)", p="categorical(2,1,0.5,0,-1)")
    assert at.slider(key="p.logit4").value == -1.0
    at.selectbox(key="p.token").set_value(1).run()
    assert at.slider(key="p.logit1").value == 1.0
    at.slider(key="p.logit1").set_value(3.0).run()
    assert picked(at) == "picked categorical(2,1,0.5,0,-1) categorical(2,3,0.5,0,-1)"


def test_a_mixture_has_a_weight_and_each_components_sliders():
    at = run(q="mixture(0.5:-1:1,0.5:1:1)", p="mixture(0.5:-1:1,0.5:1:1)")
    assert {s.key for s in at.slider} >= {"q.w1", "q.mu1", "q.mu2"}
    assert {s.key for s in at.select_slider} >= {"q.sigma1", "q.sigma2"}
    at.slider(key="p.w1").set_value(0.2).run()
    at.slider(key="p.mu2").set_value(2.0).run()
    at.select_slider(key="p.sigma1").set_value(0.5).run()
    assert picked(at).endswith(" mixture(0.2:-1:0.5,0.8:2:1)")


@pytest.mark.parametrize("bad", ["normal(0,", "banana(1)"])
def test_an_unreadable_spec_is_named_and_the_sliders_start_from_the_last_good_one(bad):
    at = run(p=bad)
    assert not at.exception
    (error,) = at.error
    assert bad in error.value
    # the page goes on with the default p, which the family menu and the sliders show
    assert picked(at) == "picked normal(0,1) normal(1,1)"
    assert at.selectbox(key="p.family").value == "normal" and at.slider(key="p.mu").value == 1.0
    assert any("the last spec that worked" in c.value for c in at.caption)
    at.selectbox(key="p.family").set_value("laplace").run()
    assert not at.error
    assert picked(at).startswith("picked normal(0,1) laplace(")


def test_a_slider_moved_under_an_unreadable_spec_repairs_it():
    at = run()
    at.text_input(key="p").set_value("normal(2,1").run()  # a typo after a good spec
    assert "missing closing bracket" in at.error[0].value
    assert picked(at) == "picked normal(0,1) normal(1,1)"  # the last spec that worked
    at.slider(key="p.mu").set_value(0.5).run()
    assert not at.error and at.text_input(key="p").value == "normal(0.5,1)"


def test_a_spec_outside_the_practical_range_is_refused_but_keeps_its_sliders():
    at = run(q="normal(0,1e-9)")
    assert not at.exception
    assert "double precision" in at.error[0].value and "sigma" in at.error[0].value
    assert at.select_slider(key="q.sigma").value == 1e-9
    assert picked(at) == "picked normal(0,1) normal(1,1)"  # the page goes on with the default
    at.select_slider(key="q.sigma").set_value(1.0).run()
    assert not at.error
    assert picked(at) == "picked normal(0,1) normal(1,1)"
