"""lab.language and lab.state across languages, in AppTest.

AppTest formats a select widget's options with its ``format_func`` in the
test's own thread, whose language is not the app's: actions on a Chinese
page run inside ``i18n.using("zh")``.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import i18n


def _family_script():
    import streamlit as st

    from i18n import _
    from lab import state
    from lab.language import language_switch
    from lab.spec_params import FAMILIES

    language_switch()
    family = state.select(_("Family"), "fam", FAMILIES, value="normal")  # shown as its labels, translated
    n = state.slider(_("Seed"), "n", min_value=0, max_value=10, value=3, step=1)
    st.write(f"{family} {n}")


def run(**query: str) -> AppTest:
    at = AppTest.from_function(_family_script, default_timeout=30)
    at.query_params.update(query)
    return at.run()


def test_the_link_sets_the_language():
    at = run(lang="zh")
    assert not at.exception
    assert at.button_group(key="lang").value == "zh"
    assert at.selectbox(key="fam").label == "分布族"
    assert at.selectbox(key="fam").options[0] == "正态分布"


def test_a_link_without_a_language_gets_the_browsers_written_into_it():
    at = run()  # AppTest's "browser" states no locale: English
    assert at.button_group(key="lang").value == "en"
    assert at.query_params["lang"] == "en"
    assert at.selectbox(key="fam").label == "Family"


def test_an_unusable_language_is_named_and_replaced():
    at = run(lang="fr")
    assert at.button_group(key="lang").value == "en"
    (note,) = at.warning
    assert "lang=fr" in note.value and "one of en, zh" in note.value


def test_switching_the_language_keeps_every_widget_value():
    at = run(lang="en", fam="Laplace", n="7")
    assert at.markdown[-1].value == "laplace 7"
    at.button_group(key="lang").set_value("zh").run()
    assert at.markdown[-1].value == "laplace 7"
    assert at.selectbox(key="fam").value == "laplace" and at.selectbox(key="fam").label == "分布族"
    with i18n.using("zh"):
        at.selectbox(key="fam").select_index(2).run()
        assert at.markdown[-1].value == "t 7"
        at.button_group(key="lang").set_value("en").run()
    assert at.markdown[-1].value == "t 7"
    assert at.selectbox(key="fam").options[2] == "Student t"


def test_an_option_named_in_another_language_is_understood():
    # A link made in English, opened with ?lang=zh: "Laplace" is no Chinese option, but it is read.
    at = run(lang="zh", fam="Laplace")
    assert at.markdown[-1].value == "laplace 3" and not at.warning
    at = run(lang="en", fam="学生 t 分布")
    assert at.markdown[-1].value == "t 3" and not at.warning
    at = run(lang="en", fam="Cauchy")  # no language has it: dropped, with the note
    assert at.markdown[-1].value == "normal 3"
    (note,) = at.warning
    assert "fam=Cauchy" in note.value


def test_the_link_note_is_written_in_the_current_language():
    at = run(lang="zh", n="99")
    (note,) = at.warning
    assert "n=99" in note.value and "0 到 10 之间的整数" in note.value


def _url(at: AppTest, key: str) -> list[str]:
    """The URL's values for ``key`` (AppTest keeps a single value as a string)."""
    v = at.query_params.get(key, [])
    return [v] if isinstance(v, str) else list(v)


def test_the_url_names_a_translated_option_in_english_in_both_languages():
    # The bug: a link naming an option in English on a Chinese page chose it but dropped it
    # from the URL, so re-sharing lost the choice.  The URL holds the English text in both
    # languages, so a zh user's link opens the same view with ?lang=en.
    at = run(lang="zh", fam="Laplace")
    assert at.markdown[-1].value == "laplace 3"
    assert _url(at, "fam") == ["Laplace"]
    with i18n.using("zh"):
        at.selectbox(key="fam").select_index(2).run()  # chosen from the Chinese menu
        assert at.markdown[-1].value == "t 3"
        assert _url(at, "fam") == ["Student t"]
        at.button_group(key="lang").set_value("en").run()
    assert _url(at, "fam") == ["Student t"] and at.markdown[-1].value == "t 3"
    at = run(lang="en", fam="学生 t 分布")  # an older link in Chinese words is read, and rewritten
    assert at.markdown[-1].value == "t 3" and _url(at, "fam") == ["Student t"]
    at = run(lang="zh", fam="t")  # the option's own key is read too
    assert at.markdown[-1].value == "t 3" and _url(at, "fam") == ["Student t"]
    with i18n.using("zh"):
        at.selectbox(key="fam").select_index(0).run()  # back to the default: left out
    assert _url(at, "fam") == []
