"""The translation catalogs and the coverage checker (scripts/translations.py).

* every message the source marks is in the Chinese catalog, with a non-empty,
  non-fuzzy translation whose ``{placeholders}`` are the English ones; the
  catalog has nothing stale; the committed ``.mo`` holds exactly the ``.po``;
* no user-visible string literal escapes ``_()`` in the files already
  converted; ``scripts/translations.py``'s ``NOT_YET_TRANSLATED`` lists the
  files part 2 of issue 13 still has to convert (their messages may stay
  untranslated meanwhile), and must shrink to nothing.
"""

from __future__ import annotations

import gettext
import textwrap

import pytest

from lab import i18n
from scripts import translations as tr

#: Files not yet converted (issue 13, part 2 empties this list; it lives in scripts/translations.py).
NOT_YET_TRANSLATED = tr.NOT_YET_TRANSLATED


@pytest.fixture(scope="module")
def template():
    return tr.extract()


@pytest.mark.parametrize("lang", tr.TRANSLATED)
def test_every_message_is_translated_and_in_step(lang, template):
    """Complete, nothing fuzzy or obsolete, placeholders kept, .mo = .po (``scripts/translations.py check``)."""
    assert tr.problems(lang, template) == []


def test_extraction_finds_the_app_and_the_core(template):
    ids = {m.id for m in template if m.id}
    assert "Seed" in ids  # _() in lab/
    assert "Home" in ids  # N_() in lab/pages.py
    assert "{name} must be > 0, got {value!r}" in ids  # InputError in kl_core
    assert "first row" in ids  # Message in kl_core
    assert "the input is empty; paste a launch script or a config" in ids  # UnreadableInput


def test_the_catalogs_are_what_gettext_reads():
    for lang in tr.TRANSLATED:
        mo = tr.po_path(lang).with_suffix(".mo")
        assert mo.parent == i18n.LOCALE_DIR / lang / "LC_MESSAGES"
        with open(mo, "rb") as fh:
            assert gettext.GNUTranslations(fh).gettext("Home") != "Home"


def test_a_translation_that_breaks_a_placeholder_is_found(tmp_path, monkeypatch):
    po = tmp_path / "zh" / "LC_MESSAGES" / "messages.po"
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "{n} rows"\nmsgstr "{m} 行"\n\n'
        '#, fuzzy\nmsgid "Seed"\nmsgstr "种子"\n\n'
        'msgid "Save"\nmsgstr ""\n\n'
        '#~ msgid "Gone"\n#~ msgstr "没了"\n',
        "utf-8",
    )
    monkeypatch.setattr(tr, "LOCALE_DIR", tmp_path)
    from babel.messages.catalog import Catalog

    source = Catalog()
    for text in ("{n} rows", "Seed", "Save", "New"):
        source.add(text, locations=[("x.py", 1)])
    source.add("Later", locations=[("pages/later.py", 1)])  # a file still to be converted
    found = "\n".join(tr.problems("zh", source, exempt={"pages/later.py"}))
    assert "placeholders differ in zh: '{n} rows'" in found
    assert "fuzzy in zh" in found and "'Seed'" in found
    assert "untranslated in zh: 'Save'" in found
    assert "missing from zh: 'New'" in found
    assert "obsolete in zh: 'Gone'" in found
    assert "is missing: run scripts/translations.py" in found  # no .mo
    assert "Later" not in found


# --------------------------------------------------------------------------- coverage


def _scan(tmp_path, code: str) -> list[str]:
    path = tmp_path / "page.py"
    path.write_text(textwrap.dedent(code), "utf-8")
    return [f.text for f in tr.untranslated(path)]


def test_the_checker_finds_unwrapped_text_in_ui_positions(tmp_path):
    found = _scan(tmp_path, '''
        import streamlit as st
        st.title("Control variates")
        st.slider("Number of draws", 1, 10, key="n", help="How many samples.")
        st.markdown(f"Mean {x:.3f} of the draws")
        ui.chart(c, name="k1-histogram", caption="What to look at.")
        chart = {"title": "share of samples", "field": "share"}
        tooltip = {"field": "count", "title": "count"}
        df = pd.DataFrame({"estimator": names})
        QUESTION = "Which direction of KL is this?"
        st.error("{n} draws are too few".format(n=n))
    ''')
    assert found == [
        "Control variates", "Number of draws", "How many samples.", "Mean  of the draws",
        "k1-histogram", "What to look at.", "share of samples", "count", "estimator",
        "Which direction of KL is this?", "{n} draws are too few",
    ]


def test_the_checker_leaves_code_maths_and_wrapped_text_alone(tmp_path):
    found = _scan(tmp_path, '''
        """A module docstring is not shown to users."""
        import streamlit as st
        st.title(_("Control variates"))
        st.markdown(_("{n} draws").format(n=n))
        QUESTION = N_("Which direction of KL is this?")
        st.latex(r"k_3 = (r - 1) - \\log r")
        state.number(_("Seed"), "seed", min_value=0)
        st.page_link("pages/home.py", icon=":material/home:")
        ui.chart(c, name=_("k1-histogram"))
        st.download_button(_("PNG image"), data=png, file_name=f"{stem}.png")
        raise ValueError("key must be one of the presets, got something else")
        if kind == "per sample histogram":
            pass
        st.metric(_("Exact KL"), f"{kl:.4g}")
        label = "Language · 语言"  # i18n: ok
        spec = {"mark": {"type": "rule"}, "encoding": {"x": {"field": "x"}}}
    ''')
    assert found == []


def test_converted_files_have_no_untranslated_text():
    offenders = [
        str(f) for path in tr.scanned_files()
        if path.relative_to(tr.ROOT).as_posix() not in NOT_YET_TRANSLATED
        for f in tr.untranslated(path)
    ]
    assert offenders == []


def test_the_allow_list_only_shrinks(template):
    """Every listed file exists and is not yet done (text outside _(), or messages untranslated).

    A file whose text is all wrapped and translated leaves the list.
    """
    scanned = {p.relative_to(tr.ROOT).as_posix(): p for p in tr.scanned_files()}
    for name in sorted(NOT_YET_TRANSLATED):
        assert name in scanned, f"{name} is not scanned (moved or removed?)"
        todo = tr.untranslated(scanned[name]) or tr.untranslated_messages("zh", name, template)
        assert todo, f"{name} is translated: remove it from NOT_YET_TRANSLATED"
