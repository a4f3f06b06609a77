"""Accessibility for every page (issue 21, WCAG 2.1 AA): what the browser needs beyond Streamlit.

``app.py`` calls :func:`page_support` once a run, after :func:`lab.ui.page_style`.
It adds one hidden element whose script (``st.html(..., unsafe_allow_javascript=True)``)
keeps the document accessible as Streamlit redraws it:

* ``<html lang>`` is the run's language (``zh-Hans`` or ``en``; Streamlit serves
  every page as ``lang="en"``), updated when the language switch is used;
* a **skip link**, the first thing Tab reaches, moves focus to the main content
  (the page's title);
* a box that scrolls (a wide display formula, a code block, a table, a row of
  panels on a phone) and holds nothing focusable gets ``tabindex="0"``, so the
  keyboard can reach and scroll it (axe's ``scrollable-region-focusable``).

The CSS that goes with it (visible focus, reduced motion, the skip link's look,
contrast fixes inside Streamlit's own markup) is :data:`A11Y_CSS`, part of
:data:`lab.ui.PAGE_CSS`.
"""

from __future__ import annotations

import json

import streamlit as st

import i18n
from i18n import _

__all__ = ["A11Y_CSS", "HTML_LANG", "SKIP_ID", "page_support"]

#: ``<html lang>`` per language of :data:`i18n.LANGUAGES`.
HTML_LANG = {"en": "en", "zh": "zh-Hans"}
#: The skip link's element id.
SKIP_ID = "kl-skip-link"
_KEY = "kla11y"

#: The script: idempotent, run again whenever its text changes (the language).
_SCRIPT = """// i18n: ok (JavaScript, no prose)
(() => {
  const cfg = %(cfg)s;
  const doc = window.parent && window.parent.document ? window.parent.document : document;
  doc.documentElement.lang = cfg.lang;
  const win = doc.defaultView || window;
  const state = win.__klA11y || (win.__klA11y = {});
  state.cfg = cfg;
  // The skip link: first in the body, before Streamlit's root, so Tab reaches it first.
  let link = doc.getElementById(cfg.skipId);
  if (!link) {
    link = doc.createElement('a');
    link.id = cfg.skipId;
    link.href = '#';
    link.addEventListener('click', (ev) => {
      ev.preventDefault();
      const main = doc.querySelector("[data-testid='stMain']");
      const target = (main && main.querySelector('h1')) || main;
      if (!target) return;
      if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
      target.focus();
      target.scrollIntoView({block: 'start'});
    });
    doc.body.insertBefore(link, doc.body.firstChild);
  }
  link.textContent = cfg.skip;
  // Boxes that scroll with nothing focusable inside: reachable and scrollable by keyboard.
  const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])';
  const fix = () => {
    state.timer = null;
    for (const root of doc.querySelectorAll("[data-testid='stMain'], [data-testid='stSidebar']")) {
      for (const el of root.querySelectorAll('div, pre, table, span.katex-display, p')) {
        if (el.closest('svg, .katex-html, .katex-mathml')) continue;
        const cs = win.getComputedStyle(el);
        const scrolls = (['auto', 'scroll'].includes(cs.overflowX) && el.scrollWidth > el.clientWidth + 1)
          || (['auto', 'scroll'].includes(cs.overflowY) && el.scrollHeight > el.clientHeight + 1);
        if (el.dataset.klScroll === '1') {
          if (!scrolls) { el.removeAttribute('tabindex'); delete el.dataset.klScroll; }
          continue;
        }
        if (scrolls && !el.hasAttribute('tabindex') && !el.querySelector(FOCUSABLE)) {
          el.setAttribute('tabindex', '0');
          el.dataset.klScroll = '1';
        }
      }
    }
  };
  // A chart is one graphic: its box (role graphics-document) carries the description as
  // its name; the SVG inside, marks and axes, is hidden (Vega leaves mark groups without
  // a name: svg-img-alt).  The numbers are in the "Show the numbers" table under it.
  const charts = () => {
    for (const svg of doc.querySelectorAll("[data-testid='stVegaLiteChart'] svg.marks")) {
      if (svg.getAttribute('aria-hidden') !== 'true') svg.setAttribute('aria-hidden', 'true');
    }
  };
  // A radio option gets its option's visible text as its name: st.radio's label element
  // gives none that axe accepts (axe's label rule).
  const radios = () => {
    for (const input of doc.querySelectorAll("[data-testid='stMain'] input[type='radio']")) {
      let box = input.labels && input.labels.length ? input.labels[0] : input.parentElement;
      for (let i = 0; 4 > i && box && !box.textContent.trim(); i++) box = box.parentElement;
      const text = box ? box.textContent.trim() : '';
      if (text && input.getAttribute('aria-label') !== text) input.setAttribute('aria-label', text);
    }
  };
  const BOXES = "[data-testid='stMain'], [data-testid='stMainBlockContainer'], [data-testid='stSidebar']";
  const later = () => {
    if (doc.documentElement.lang !== state.cfg.lang) doc.documentElement.lang = state.cfg.lang;
    if (state.resizer) {
      for (const box of doc.querySelectorAll(BOXES)) {
        if (!state.sized.has(box)) { state.sized.add(box); state.resizer.observe(box); }
      }
    }
    charts();
    radios();
    if (!state.timer) state.timer = win.setTimeout(fix, 200);
  };
  if (!state.observer) {
    state.observer = new win.MutationObserver(later);
    state.observer.observe(doc.body, {childList: true, subtree: true});
    win.addEventListener('resize', later);
    // A box can start or stop scrolling with no node added: the sidebar's slide ends, a font
    // arrives and widens a formula.  Watch the content's width and the fonts too.
    state.sized = new win.WeakSet();
    if (win.ResizeObserver) state.resizer = new win.ResizeObserver(later);
    if (doc.fonts) doc.fonts.addEventListener('loadingdone', later);
  }
  later();
})();
"""

#: The page CSS of issue 21 (in :data:`lab.ui.PAGE_CSS`).
A11Y_CSS = (
    # The skip link: off screen until it has the keyboard focus.  Streamlit 1.67 adds one of
    # its own (stSkipToContent), in English only and not always first: ours replaces it.
    "[data-testid='stSkipToContent']{display:none !important;}"
    f"#{SKIP_ID}{{position:fixed;left:0.5rem;top:-4rem;z-index:1000002;padding:0.5rem 1rem;"
    "background:Canvas;color:CanvasText;border:2px solid currentColor;border-radius:0.5rem;"
    "font-family:'Source Sans','Source Sans Pro',sans-serif;font-size:1rem;}"  # i18n: ok (CSS)
    f"#{SKIP_ID}:focus{{top:0.5rem;outline:2px solid Highlight;outline-offset:2px;}}"
    # Focus is always visible: the boxes made focusable above, the title the skip link
    # moves to, expander summaries, links and buttons (Streamlit's own ring stays).
    "[data-kl-scroll='1']:focus-visible,[data-testid='stMain'] h1:focus,"
    "summary:focus-visible,a:focus-visible,[role='tab']:focus-visible,"
    "[data-testid='stVegaLiteChart'] :focus-visible"
    "{outline:2px solid currentColor !important;outline-offset:2px;}"
    # Text boxes and menus only tint their border on focus: add a ring.  The main area
    # itself takes focus (Streamlit makes it scrollable by keyboard).
    ":is([data-testid='stSelectbox'] [role='group'],[data-testid='stMultiSelect'] [role='group'],"
    "[data-testid='stNumberInputContainer'],[data-testid='stTextInputRootElement'],"
    "[data-testid='stTextAreaRootElement'],[data-baseweb='select'],[data-baseweb='input'],"
    "[data-baseweb='textarea']):has(:focus-visible)"
    "{outline:2px solid currentColor;outline-offset:1px;}"
    "[data-testid='stMain']:focus-visible,canvas:focus-visible"
    "{outline:2px solid currentColor;outline-offset:-2px;}"
    # Reduced motion: no animated transitions in the app's own CSS or Streamlit's.
    "@media (prefers-reduced-motion: reduce){*,*::before,*::after{"
    "animation-duration:0.01ms !important;animation-iteration-count:1 !important;"
    "transition-duration:0.01ms !important;scroll-behavior:auto !important;}}"
    # Contrast inside Streamlit's markup (the theme sets the rest, .streamlit/config.toml):
    # inline code in a caption takes the caption's colour (its green, faded, was 3.0:1);
    # a disabled widget's label is drawn at 75 % of the text colour instead of 40 % (axe
    # cannot tell the label belongs to a disabled control).
    "[data-testid='stCaptionContainer'] code{color:inherit;}"
    # An estimator's name in its chart colour (lab.ui.estimator_name): the colours are for
    # lines (3:1); as text they are mixed towards the text colour (4.5:1 in both themes).
    ".stMarkdownColoredText strong{color:color-mix(in srgb,currentColor 62%,CanvasText);}"
    # Code: the comment grey and the keyword blue of Streamlit's highlighting (3.6:1, 3.8:1).
    "[data-testid='stCode'] .token.comment,[data-testid='stCode'] .token.prolog"
    "{color:light-dark(#5d6070,#a9adbc) !important;}"
    "[data-testid='stCode'] .token.keyword{color:light-dark(#0f62ad,#7ab8f5) !important;}"
    # …and its green of True/False/None and numbers (2.1:1 on the light theme).
    "[data-testid='stCode'] .token.boolean,[data-testid='stCode'] .token.number,"
    "[data-testid='stCode'] .token.constant{color:light-dark(#157a35,#5fd38a) !important;}"
    ".stElementContainer:has(:disabled) [data-testid='stWidgetLabel'],"
    ".stElementContainer:has([aria-disabled='true']) [data-testid='stWidgetLabel']"
    "{color:color-mix(in srgb,currentColor 75%,transparent);}"
    # A primary button's text: white on the light theme's dark red, dark on the dark
    # theme's light red (white on it would be 3.0:1).
    "button[kind^='primary'],button[kind^='primary'] *{color:light-dark(#fff,#171614) !important;}"
    # The script's box takes no room.
    f"div:has(> .st-key-{_KEY}){{display:none;}}"
)


def page_support() -> None:
    """Add the script of this module (``<html lang>``, skip link, focusable scroll boxes)."""
    cfg = {
        "lang": HTML_LANG.get(i18n.language(), "en"),
        "skip": _("Skip to main content"),
        "skipId": SKIP_ID,
    }
    script = _SCRIPT % {"cfg": json.dumps(cfg, ensure_ascii=False)}
    with st.container(key=_KEY):
        st.html(f"<script>{script}</script>", unsafe_allow_javascript=True)
