"""The translation catalogs and the coverage checker (scripts/translations.py).

* every message the source marks is in the Chinese catalog, with a non-empty,
  non-fuzzy translation whose ``{placeholders}`` are the English ones; the
  catalog has nothing stale; the committed ``.mo`` holds exactly the ``.po``;
* no user-visible string literal escapes ``_()`` in the files already
  converted; ``scripts/translations.py``'s ``NOT_YET_TRANSLATED`` lists the
  files not yet converted (empty since part 2 of issue 13), and only shrinks.
"""

from __future__ import annotations

import gettext
import textwrap

import pytest

import i18n
from scripts import translations as tr

#: Files not yet converted (empty since issue 13, part 2; it lives in scripts/translations.py).
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
        'msgid "Home"\nmsgstr "*首页*"\n\n'
        '#~ msgid "Gone"\n#~ msgstr "没了"\n',
        "utf-8",
    )
    monkeypatch.setattr(tr, "LOCALE_DIR", tmp_path)
    from babel.messages.catalog import Catalog

    source = Catalog()
    for text in ("{n} rows", "Seed", "Save", "New", "Home"):
        source.add(text, locations=[("x.py", 1)])
    source.add("Later", locations=[("pages/later.py", 1)])  # a file still to be converted
    found = "\n".join(tr.problems("zh", source, exempt={"pages/later.py"}))
    assert "placeholders differ in zh: '{n} rows'" in found
    assert "fuzzy in zh" in found and "'Seed'" in found
    assert "untranslated in zh: 'Save'" in found
    assert "missing from zh: 'New'" in found
    assert "obsolete in zh: 'Gone'" in found
    assert "italics on Chinese text in zh (a fake slant: use **bold**): '*首页*' in 'Home'" in found
    assert "is missing: run scripts/translations.py" in found  # no .mo
    assert "Later" not in found


def test_a_message_with_a_context_is_its_own_entry(tmp_path, monkeypatch):
    """pgettext's context is the msgctxt: one English word, two translations, each checked and compiled."""
    from babel.messages.catalog import Catalog

    po = tmp_path / "zh" / "LC_MESSAGES" / "messages.po"
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgctxt "histogram bin"\nmsgid "from"\nmsgstr "区间下限"\n\n'
        'msgid "from"\nmsgstr "起点"\n',
        "utf-8",
    )
    monkeypatch.setattr(tr, "LOCALE_DIR", tmp_path)
    source = Catalog()
    source.add("from", locations=[("charts/histograms.py", 1)], context="histogram bin")
    source.add("from", locations=[("lab/notes/config_doctor.py", 1)], context="settings table")
    found = "\n".join(tr.problems("zh", source))
    assert "missing from zh: 'from' [settings table]" in found
    assert "stale in zh (no longer in the source): 'from'" in found  # the one without a context
    assert "[histogram bin]" not in found
    tr.update("zh")  # compiles the .mo from the .po (the real source has no bare "from")
    with open(po.with_suffix(".mo"), "rb") as fh:
        mo = gettext.GNUTranslations(fh)
    assert mo.pgettext("histogram bin", "from") == "区间下限"
    assert tr._compiled_from(tr.read_catalog("zh")).get("histogram bin\x04from") == "区间下限"


def test_the_two_senses_of_from_are_translated_apart():
    assert tr.config()["keywords"].count("pgettext:1c,2") == 1
    with i18n.using("zh"):
        bin_edge, source = i18n.pgettext("histogram bin", "from"), i18n.pgettext("settings table", "from")
        assert (bin_edge, i18n.pgettext("histogram bin", "to")) == ("区间下限", "区间上限")
        assert source == "来源"
    with i18n.using("en"):
        assert i18n.pgettext("settings table", "from") == "from"


@pytest.mark.parametrize(("text", "italic"), [
    ("KL 的方向*从*采样分布出发", ["*从*"]),
    ("见 _token 与序列_ 页面", ["_token 与序列_"]),
    ("KL 的方向是**从**采样分布出发的", []),
    ("Var(kλ*), λ = λ*", []),
    (r"λ\\* → 1，$a*b + c*d$，`x*y*z`，{kl_fwd} 与 {kl_rev}", []),
    ("π_old 与 π_ref 之间", []),
    ("**反例**（K = 3）：*另一个* KL", ["*另一个*"]),
])
def test_italics_on_chinese_text_are_found(text, italic):
    assert tr.cjk_italics(text) == italic


def test_no_chinese_translation_is_set_in_italics():
    """Browsers slant CJK glyphs artificially: Chinese emphasis is **bold** (docs/app_conventions.md)."""
    from babel.messages.pofile import read_po

    with open(tr.po_path("zh"), "rb") as fh:
        slanted = [(m.id, tr.cjk_italics(m.string)) for m in read_po(fh, locale="zh")
                   if m.id and isinstance(m.string, str) and tr.cjk_italics(m.string)]
    assert slanted == []


@pytest.mark.parametrize(("text", "stray"), [
    ("**答案：**按双精度计算", ["**答案：**按双精度计算"]),  # closing ** between a colon and a letter
    ("**答案**：按双精度计算", []),
    ("**对：{names}。**双精度", ["**对：X。**双精度"]),
    ("是**{what}**（与", []),  # a placeholder is text once filled in
    ("A **bold** word, λ\\** and $a**b$", []),
])
def test_bold_markers_markdown_cannot_pair_are_found(text, stray):
    assert tr.stray_bold(text) == stray


def test_no_chinese_translation_shows_stray_asterisks():
    """CommonMark does not close ``**答案：**按``: the page showed "**答案：*按…" in italics (control variates)."""
    from babel.messages.pofile import read_po

    with open(tr.po_path("zh"), "rb") as fh:
        stray = [(m.id, tr.stray_bold(s)) for m in read_po(fh, locale="zh") if m.id
                 for s in (m.string if isinstance(m.string, tuple) else (m.string,)) if s and tr.stray_bold(s)]
    assert stray == []


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
