"""i18n: the translation function and the run's language."""

import contextvars

import pytest

import i18n


def test_english_is_the_source_language():
    ctx = contextvars.copy_context()
    ctx.run(i18n.set_language, "en")
    assert ctx.run(i18n._, "Exact KL[q‖p]") == "Exact KL[q‖p]"
    assert ctx.run(i18n.ngettext, "{n} draw", "{n} draws", 2) == "{n} draws"
    assert ctx.run(i18n.ngettext, "{n} draw", "{n} draws", 1) == "{n} draw"
    assert ctx.run(i18n.pgettext, "histogram bin", "from") == "from"
    assert ctx.run(i18n.npgettext, "a context", "{n} draw", "{n} draws", 2) == "{n} draws"


def test_language_is_per_context():
    ctx = contextvars.copy_context()
    ctx.run(i18n.set_language, "zh")
    assert ctx.run(i18n.language) == "zh"
    assert contextvars.copy_context().run(i18n.language) == i18n.language()


def test_unknown_language_is_refused_by_name():
    with pytest.raises(ValueError, match="lang must be one of en, zh"):
        i18n.set_language("fr")


def test_marker_leaves_text_alone():
    assert i18n.N_("A sentence.") == "A sentence."


def test_chinese_comes_from_the_catalog():
    with i18n.using("zh"):
        assert i18n._("Home") == "首页"
        assert i18n._("a sentence no catalog has") == "a sentence no catalog has"
    assert i18n._("Home") == "Home"  # the run's language is back


def test_a_context_picks_the_sense_of_a_short_word():
    """One English word, two meanings, two translations (msgctxt); without a catalog entry, the English."""
    with i18n.using("zh"):
        assert i18n.pgettext("histogram bin", "from") != i18n.pgettext("settings table", "from")
        assert i18n.pgettext("no such context", "from") == "from"
        assert i18n.npgettext("no such context", "{n} draw", "{n} draws", 1) == "{n} draw"


def test_using_restores_the_language_after_an_error():
    ctx = contextvars.copy_context()

    def body():
        i18n.set_language("en")
        with pytest.raises(RuntimeError), i18n.using("zh"):
            assert i18n.language() == "zh"
            raise RuntimeError
        return i18n.language()

    assert ctx.run(body) == "en"


@pytest.mark.parametrize(
    ("locale", "lang"),
    [("zh-CN", "zh"), ("zh-TW", "zh"), ("zh", "zh"), ("ZH_hans", "zh"), ("en-US", "en"),
     ("fr-FR", "en"), ("", "en"), (None, "en")],
)
def test_the_browser_locale_gives_the_default_language(locale, lang):
    assert i18n.from_locale(locale) == lang


def test_a_core_message_is_translated_with_its_params():
    from kl_core.estimation.distributions import parse

    with pytest.raises(ValueError) as info:
        parse("normal(0,-1)")
    assert i18n.message(info.value) == "spec 'normal(0,-1)': sigma must be > 0, got -1.0"
    with i18n.using("zh"):
        # the outer template and the nested reason are both translated, the numbers kept
        assert i18n.message(info.value) == "spec 'normal(0,-1)'：sigma 必须 > 0，实际为 -1.0"


def test_a_file_error_shows_its_user_sentence_translated():
    import io

    from kl_core.audit.statistics import load_table

    buf = io.BytesIO(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    buf.name = "logps.csv"
    with pytest.raises(ValueError) as info:
        load_table(buf, "lp", "lq")
    assert str(info.value).startswith("path_or_buffer: 'logps.csv' is not a text CSV file")  # code's text
    assert i18n.message(info.value).startswith("“logps.csv” is not a CSV: it looks like a PNG image. Upload")
    with i18n.using("zh"):
        assert i18n.message(info.value).startswith("“logps.csv”不是 CSV：它看起来是一张 PNG 图片。请上传 CSV")


def test_a_message_without_a_template_stays_english():
    from kl_core.validation import Message

    with i18n.using("zh"):
        assert i18n.message(ValueError("plain English")) == "plain English"
        assert i18n.message(Message("no catalog has {this}", this="it")) == "no catalog has it"
        assert i18n.message("a string") == "a string"


def test_a_broken_translation_falls_back_to_english(monkeypatch):
    from kl_core.validation import Message

    class Broken:
        def gettext(self, text):
            return "{missing} 坏了"

    monkeypatch.setattr(i18n, "_catalog", lambda lang: Broken())
    assert i18n.message(Message("{n} rows", n=3)) == "3 rows"
