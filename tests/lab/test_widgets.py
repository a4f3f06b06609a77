"""lab.widgets in AppTest: the 1–2–5 count slider and the preset bar."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from kl_core.estimation.presets import PRESETS
from lab.widgets import active_preset


def _count_script():
    import streamlit as st

    from lab.widgets import count_slider

    n = count_slider("N", "n", value=1000, hi=100_000, accept_from=2)
    st.write(f"n = {n}")


def run(**query: str) -> AppTest:
    at = AppTest.from_function(_count_script, default_timeout=30)
    at.query_params.update(query)
    return at.run()


def shown(at: AppTest) -> str:
    assert not at.exception
    return at.markdown[-1].value


def test_the_count_slider_moves_in_one_two_five_steps():
    at = run()
    assert at.select_slider(key="n").options[:3] == ["10", "20", "50"]
    assert at.select_slider(key="n").options[-1] == "100000"
    at.select_slider(key="n").set_value(5000).run()
    assert shown(at) == "n = 5000"


def test_an_off_grid_link_value_is_kept_and_a_bad_one_is_named():
    at = run(n="1234")
    assert shown(at) == "n = 1234" and not at.warning
    assert "1234" in at.select_slider(key="n").options
    at = run(n="3")  # below the grid but a size older links could carry
    assert shown(at) == "n = 3"
    for bad in ("abc", "1", "2.5", "200001"):
        at = run(n=bad)
        assert shown(at) == "n = 1000"
        (note,) = at.warning
        assert f"n={bad}" in note.value and "a whole number from 2 to 100,000" in note.value


def _presets_script():
    import streamlit as st

    from lab.picker import distribution_pair
    from lab.widgets import preset_bar

    preset_bar({"schulman-small": "small", "heavy-tails": "heavy"}, "normal(0,1)", "normal(0.1,1)")
    q, p = distribution_pair("normal(0,1)", "normal(0.1,1)")
    st.write(f"picked {q.spec} {p.spec}")


def test_a_preset_button_sets_both_specs_and_lights_up():
    at = AppTest.from_function(_presets_script, default_timeout=30).run()
    assert at.button(key="preset_schulman-small").proto.type == "primary"
    assert at.button(key="preset_heavy-tails").proto.type == "secondary"
    at.button(key="preset_heavy-tails").click().run()
    assert at.markdown[-1].value == "picked normal(0,1) normal(0,1.5)"
    assert at.button(key="preset_heavy-tails").proto.type == "primary"
    # a slider move away from the preset turns its highlight off
    at.select_slider(key="p.sigma").set_value(1.2).run()
    assert at.button(key="preset_heavy-tails").proto.type == "secondary"


def test_active_preset_matches_exact_specs_only():
    preset = PRESETS["next-token"]
    assert active_preset(preset.q_spec, preset.p_spec) is preset
    assert active_preset(preset.p_spec, preset.q_spec) is None


def _seed_script():
    import streamlit as st

    from lab.widgets import seed_picker

    st.write(f"seed = {seed_picker()}")


def test_the_seed_box_states_its_range_in_its_help_in_whole_numbers():
    at = AppTest.from_function(_seed_script, default_timeout=30).run()
    assert at.markdown[-1].value == "seed = 0"
    assert not any("Allowed" in c.value for c in at.caption)  # issue 20 §6: no line under the box
    (box,) = at.number_input
    assert box.help.endswith("Allowed: 0 to 2,147,483,647.")  # the range stays in its help
    for bad, used in (("-5", 0), ("2147483648", 0), ("abc", 0), ("1.5", 1)):
        at = AppTest.from_function(_seed_script, default_timeout=30)
        at.query_params["seed"] = bad
        at.run()
        assert at.markdown[-1].value == f"seed = {used}"
        (note,) = at.warning  # says what the link set and what is used instead
        assert f"seed={bad}" in note.value and f"showing **{used}** instead" in note.value
        assert "0 to 2,147,483,647" in note.value and "e+09" not in note.value


def test_range_text_writes_integers_as_integers():
    from lab.state import range_text

    assert range_text(2**31 - 1) == "2,147,483,647"
    assert range_text(10.0) == "10"
    assert range_text(0.05) == "0.05"
    assert range_text(1e-6) == "1e-06"


def _opening_script():
    import streamlit as st

    from lab.widgets import page_opening

    first = page_opening("A title", "The **question** of the page.")
    st.write("after")
    first.write("the answer")


def test_page_opening_draws_the_title_then_the_question():
    at = AppTest.from_function(_opening_script, default_timeout=30).run()
    assert not at.exception
    assert [t.value for t in at.title] == ["A title"]
    # the returned container sits under the question, above what the page draws after it
    assert [m.value for m in at.markdown] == ["The **question** of the page.", "the answer", "after"]


def test_a_count_slider_that_takes_links_only_from_100_names_its_smaller_steps_too():
    """Control variates said a link's N must be "a whole number from 100 to 1,000,000" while its slider
    goes down to 10 and ?n=20 is used."""
    from lab.widgets import count_allowed

    assert count_allowed(10, 1_000_000, 100) == "10, 20, 50 or a whole number from 100 to 1,000,000"
    assert count_allowed(10, 100_000, 2) == "a whole number from 2 to 100,000"
    assert count_allowed(10, 100_000, 10) == "a whole number from 10 to 100,000"
