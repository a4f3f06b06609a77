"""lab.i18n: the translation function and the run's language."""

import contextvars

import pytest

from lab import i18n


def test_english_is_the_source_language():
    ctx = contextvars.copy_context()
    ctx.run(i18n.set_language, "en")
    assert ctx.run(i18n._, "Exact KL[q, p]") == "Exact KL[q, p]"
    assert ctx.run(i18n.ngettext, "{n} draw", "{n} draws", 2) == "{n} draws"
    assert ctx.run(i18n.ngettext, "{n} draw", "{n} draws", 1) == "{n} draw"


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
