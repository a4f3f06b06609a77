"""Widgets whose values live in the URL, so that a link reproduces the view.

Every widget on every page is made with one of these helpers.  Each one calls
the Streamlit widget with ``key=<url key>`` and ``bind="query-params"``
(Streamlit ≥ 1.55), which gives:

* the widget's value is the query parameter ``?<key>=<value>``; a value equal
  to the widget's default is left out of the URL;
* opening a URL seeds the widget from it;
* Streamlit itself drops a URL value it cannot use (``?n=abc``, out of range,
  unknown option) and falls back to the default;
* after drawing the widget the helper writes its value into the URL from the
  server where the browser's URL disagrees (:func:`_write_url`): Streamlit's
  browser-side sync is lost for a widget drawn at a new place on the page.

On top of that these helpers show a visible note under the widget when a link
carried a value that was dropped or corrected, so a shared link that no longer
fits the page never fails silently.

Conventions (see ``docs/app_conventions.md``):

* keys are short, URL-safe and unique on their page (``q``, ``p``, ``n``,
  ``R``, ``seed``, ``lam``, ``mu``);
* the same key on two pages with an identical widget (same helper, label,
  range and default) shares its value when the user switches pages; a
  different definition under the same key keeps its own value;
* select-type widgets put the option's text in the URL (its English text
  where the options are translated), so keep ``format_func`` labels short and
  stable; their options may be a mapping of option to its untranslated label
  (``{"on": N_("on-policy")}``), shown translated without a ``format_func``;
* to change a bound widget from code (presets), call :func:`set_values` from
  an ``on_click``/``on_change`` callback; ``st.query_params`` cannot write a
  bound parameter.

Languages: labels, help and option texts are translated by the caller
(``_()``).  A select-type widget whose options read the same in every language
is bound by Streamlit (its URL value is the displayed text).  One whose options
are translated keeps its option's *English* text in the URL, in every language
(:func:`_bound_in_english`), so a link made in Chinese opens the same view with
``?lang=en`` and the other way round, and re-sharing keeps the choice; a link
naming an option in either language (or by its index) is read.  The language
switch calls :func:`relabel`, which redraws every select-type value of the page
in the new language's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

import i18n
from i18n import _

__all__ = [
    "BIND",
    "allowed_range",
    "check_link",
    "checkbox",
    "dropped_link",
    "follows_language",
    "multiselect",
    "notes_below",
    "number",
    "radio",
    "range_text",
    "reads",
    "relabel",
    "rewrite",
    "segmented",
    "select",
    "select_slider",
    "set_values",
    "slider",
    "start_run",
    "text",
    "toggle",
    "unread_note",
]

T = TypeVar("T")

BIND = "query-params"
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,11}$")
_NOTES = "_lab_url_notes"  # session-state slot: {key: (the link's text, fallback value)}
_SELECTS = "_lab_select_keys"  # session-state slot: select-type keys drawn in the latest run
_READ = "_lab_url_read"  # session-state slot: the URL keys this run's widgets bound or its page read
_UNREAD = "_lab_url_unread"  # session-state slot: {page: {key: values} of the link that no run has read yet}
#: Query parameters that are no page's setting: the language, and Streamlit's own.
_NOT_SETTINGS = frozenset({"lang", "embed", "embed_options"})


def _check_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(
            f"URL key must be 1-12 characters [A-Za-z0-9_] starting with a letter, got {key!r}"
        )
    if key.lower() in ("embed", "embed_options"):
        raise ValueError(f"URL key {key!r} is reserved by Streamlit")
    st.session_state.setdefault(_READ, set()).add(key)
    return key


def reads(*keys: str) -> None:
    """Count URL parameters that the page reads itself, not through a widget, as read (see :func:`check_link`)."""
    st.session_state.setdefault(_READ, set()).update(keys)


def check_link(page: str) -> None:
    """After a complete run of ``page``: keep the link's parameters that no run of it has read yet.

    A link whose parameter no widget binds (a typo, a setting a later version renamed, one that only another
    page has) would otherwise change nothing without a word: the view would not be what the link's sender
    saw.  The first complete run of the page in the session takes the link as opened; a later run drops the
    parameters it read (a widget shown only at some settings, drawn since: Estimator Lab's λ once kλ is
    chosen).  When that list changes the page runs again, so that :func:`unread_note` shows it at its top.
    Only the link's own parameters count: a widget's key that the user's settings put in the URL and later
    hide is the page's, not the link's.
    """
    read = st.session_state.get(_READ, set()) | _NOT_SETTINGS
    pending: dict[str, dict[str, list[str]]] = st.session_state.setdefault(_UNREAD, {})
    if page not in pending:  # the link as opened
        left = {k: st.query_params.get_all(k) for k in st.query_params if k not in read}
        changed = bool(left)
    else:
        left = {k: v for k, v in pending[page].items() if k not in read}
        changed = left != pending[page]
    pending[page] = left
    if changed:
        st.rerun()


def unread_note(page: str) -> None:
    """Show the link's parameters that no run of ``page`` has read (:func:`check_link`), if any."""
    unread = st.session_state.get(_UNREAD, {}).get(page)
    if unread:
        text = (_("This link also set {params}, which this page does not read at these settings: it changes "
                  "nothing.") if len(unread) == 1 else
                _("This link also set {params}, which this page does not read at these settings: they change "
                  "nothing."))
        # TRANSLATORS: between the items of a list of link parameters
        params = _(", ").join(f"`{k}={v}`" for k, values in unread.items() for v in values)
        st.warning(text.format(params=params), icon=":material/link_off:")


def _raw_from_url(key: str) -> list[str] | None:
    """The link's value for ``key`` on the widget's first run, else None.

    Only the first registration is checked: afterwards the browser owns the
    value and Streamlit's copy of the query string may lag behind it.
    """
    if key in st.session_state:
        return None
    raw = st.query_params.get_all(key)
    return raw or None


def _as_number(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _matches(raw: list[str], value: Any, fmt: Callable[[Any], str], options: Sequence[Any]) -> bool:
    """True if the URL text ``raw`` is what the widget now shows as ``value``."""
    last = raw[-1]
    if isinstance(value, bool):
        return last.strip().lower() == str(value).lower()
    if isinstance(value, (int, float)) and not options:
        x = _as_number(last)
        return x is not None and x == float(value)
    if isinstance(value, (list, tuple)):
        return [fmt(v) for v in value] == raw
    if last == fmt(value):
        return True
    # Select widgets also accept an option's index in the URL, unless the options are numbers themselves:
    # then ?lesson=0 names no lesson, not the first one.
    if any(fmt(o).isdigit() for o in options):
        return False
    return last.isdigit() and int(last) < len(options) and options[int(last)] == value


def _track(
    key: str,
    raw: list[str] | None,
    value: Any,
    *,
    allowed: str,
    fmt: Callable[[Any], str] = str,
    options: Sequence[Any] = (),
) -> None:
    """Record and show a note if the link's value for ``key`` was not used as given.

    The note is written afresh on every run (in the run's language) from the
    link's text and the value shown instead, until the user changes the widget.
    """
    notes: dict[str, tuple[str, Any, bool]] = st.session_state.setdefault(_NOTES, {})
    if raw is not None and len(raw) > 1 and not isinstance(value, (list, tuple)):
        notes[key] = ("&".join(f"{key}={r}" for r in raw), value, True)  # one widget, several values
    elif raw is not None and not _matches(raw, value, fmt, options):
        notes[key] = ("&".join(f"{key}={r}" for r in raw), value, False)
    if key in notes:
        given, fallback, repeated = notes[key]
        if value == fallback:
            shown = ", ".join(fmt(v) for v in value) if isinstance(value, (list, tuple)) else fmt(value)
            text = (_("The link set `{given}`: {key} takes one value, and this page shows **{shown}**.")
                    if repeated else
                    _("The link set `{given}`, which this page can't use ({allowed}); "
                      "showing **{shown}** instead.")).format(given=given, allowed=allowed, shown=shown, key=key)
            pending = st.session_state.get(_DEFERRED)
            if pending is not None:  # inside notes_below(): shown after the block
                pending.append(text)
            else:
                st.warning(text, icon=":material/link_off:")
        else:  # the user has since changed the widget: the note is stale
            del notes[key]


#: Session key of the notes :func:`notes_below` collects (None outside it).
_DEFERRED = "_link_notes_below"


@contextmanager
def notes_below() -> Iterator[None]:
    """Show the notes of link values the widgets of this block could not use after the block, not in it.

    For widgets in an expander that starts closed ("More settings"): a note inside it would be hidden, and
    the page would seem to drop the link's value without a word.
    """
    outer = st.session_state.get(_DEFERRED)
    st.session_state[_DEFERRED] = []
    try:
        yield
        texts = list(st.session_state[_DEFERRED])
    finally:
        st.session_state[_DEFERRED] = outer
    for text in texts:
        st.warning(text, icon=":material/link_off:")


def dropped_link(key: str, raw: list[str], fallback: Any) -> None:
    """Note that the link's ``key=raw`` was not used and ``fallback`` is shown instead.

    For a value set from code before the widget is drawn (the language
    switch's browser default): the widget then shows the usual note until the
    user changes it.
    """
    st.session_state.setdefault(_NOTES, {})[key] = ("&".join(f"{key}={r}" for r in raw), fallback, False)


def _other_language(
    key: str, raw: list[str], choices: Sequence[Any], fmt: Callable[[Any], str], multi: bool
) -> bool:
    """Read a link whose option text is another language's (``?lang=zh&fam=Normal``).

    Select-type widgets keep the displayed text in the URL, so a link made in
    one language and opened in another (an edited ``?lang=``) names its options
    in words this run does not show.  If every value is an option's text in
    some language, the widget is set to those options (Streamlit drops the
    link's text) and True is returned; otherwise False.
    """
    shown = {fmt(o) for o in choices}
    if all(r in shown for r in raw):
        return False
    names: dict[str, Any] = {}
    for lang in i18n.LANGUAGES:
        with i18n.using(lang):
            for option in choices:
                names.setdefault(fmt(option), option)
    if not all(r in names for r in raw):
        return False
    st.session_state[key] = [names[r] for r in raw] if multi else names[raw[-1]]
    return True


def follows_language(key: str) -> None:
    """Have :func:`relabel` rewrite the widget ``key`` on a language switch.

    The select-type helpers here do it for their bound widgets; call it for an
    unbound select whose options are translated (the picker's family menu), so
    that it shows its option in the new language instead of the old words.
    """
    st.session_state.setdefault(_SELECTS, set()).add(key)


def start_run() -> None:
    """Forget the previous run's select-type widgets and read keys (``app.py`` calls it before the page runs)."""
    st.session_state[_SELECTS] = set()
    st.session_state[_READ] = set()


def relabel() -> None:
    """Write every select-type value of the latest run again, in the new language's words.

    The language switch's ``on_change``: callbacks run before the script, when
    writing a widget's value is allowed, and a value written from code is sent
    to the browser, which shows its (now translated) text and puts it in the URL.
    """
    for key in st.session_state.get(_SELECTS, ()):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def _bound(
    widget: Callable[..., Any],
    label: str,
    key: str,
    *,
    allowed: str,
    fmt: Callable[[Any], str] = str,
    choices: Sequence[Any] = (),
    **kwargs: Any,
) -> Any:
    """``widget(label, key=key, bind=…, **kwargs)``, with a note if the link's value was not used.

    ``allowed`` describes the usable values; ``fmt`` and ``choices`` are how the
    widget writes its value and its options (see :func:`_track`).
    """
    raw = _raw_from_url(_check_key(key))
    if choices:
        follows_language(key)
        if _translated(choices, fmt):
            return _bound_in_english(widget, label, key, raw, allowed=allowed, fmt=fmt,
                                     choices=choices, **kwargs)
        if raw is not None and _other_language(key, raw, choices, fmt, widget is st.multiselect):
            raw = None
    out = widget(label, key=key, bind=BIND, **kwargs)
    _track(key, raw, out, allowed=allowed, fmt=fmt, options=choices)
    _write_url(key)
    return out


def _write_url(key: str) -> None:
    """Make the URL hold the bound widget ``key``'s value as this run shows it.

    Streamlit 1.67 leaves a user's change of a bound widget to the browser,
    which writes the URL itself, and the browser loses that job for a widget
    that is drawn again at a new place on the page: when an element above it
    appears or goes (moving q's μ off a preset removes the preset's note above
    N, R and the seed), the old copy's clean-up unregisters the new copy's URL
    binding (both have the widget's id).  From then on N, R and the seed
    moved on screen but not in the URL (issue 17 §5).  So every run compares
    the widget's value with the URL the browser sent and, where they differ,
    writes it the way Streamlit writes a value set from code
    (``QueryParams.set_corrected_value``; the value at the widget's default is
    taken out).  Where the browser did its job the two agree and nothing is sent.

    This reaches into Streamlit's session state (``uv.lock`` pins 1.67);
    ``tests/app/test_url_state.py`` fails if those internals change.
    """
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    safe = ctx.session_state
    inner = safe._state
    widget_id = inner.get_widget_id_from_key(key)
    meta = inner.get_widget_metadata(widget_id) if widget_id is not None else None
    if meta is None or meta.bind != BIND:
        return
    value = st.session_state[key]
    with safe.query_params() as qp:
        if value == meta.deserializer(None):
            # Streamlit has already dropped it from its copy if the browser's URL had it.
            if qp.has_param(key) or qp.get_initial_value(key) is not None:
                qp.set_with_no_forward_msg(key, "")
                qp.remove_param(key)  # sends the URL without it
            return
        shown = meta.serializer(value)
        if not qp.stored_param_matches_corrected_value(key, shown, meta.value_type):
            qp.set_corrected_value(key, shown, meta.value_type)


def browser_reported(key: str) -> bool:
    """True if the browser sent widget ``key``'s value with this run (Streamlit 1.67 internals)."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return True
    inner = ctx.session_state._state
    widget_id = inner.get_widget_id_from_key(key)
    return widget_id is not None and widget_id in inner._new_widget_state


def _english(fmt: Callable[[Any], str], option: Any) -> str:
    """An option's text in English: what the URL holds, whatever the run's language."""
    with i18n.using(i18n.LANGUAGES[0]):
        return fmt(option)


def _translated(choices: Sequence[Any], fmt: Callable[[Any], str]) -> bool:
    """True if some option reads differently in another language."""
    english = [_english(fmt, o) for o in choices]
    for lang in i18n.LANGUAGES[1:]:
        with i18n.using(lang):
            if [fmt(o) for o in choices] != english:
                return True
    return False


def _bound_in_english(
    widget: Callable[..., Any],
    label: str,
    key: str,
    raw: list[str] | None,
    *,
    allowed: str,
    fmt: Callable[[Any], str],
    choices: Sequence[Any],
    **kwargs: Any,
) -> Any:
    """A select-type widget whose options are translated, kept in the URL by their English text.

    Streamlit's binding writes the *displayed* text, which would make a link
    depend on its language (and drops a link's English text on a Chinese run).
    So the widget is not bound: a link's text in any language (or an option's
    index) seeds it on its first run, and after each run the URL is set to the
    English text of the value (left out at the default), in every language.
    """
    multi = widget is st.multiselect
    default = (kwargs["options"][kwargs["index"]] if "index" in kwargs
               else kwargs.get("default", kwargs.get("value")))
    if raw is not None:
        names: dict[str, Any] = {}
        for lang in i18n.LANGUAGES:
            with i18n.using(lang):
                for option in choices:
                    names.setdefault(fmt(option), option)
        for option in choices:  # an option's own key (?src=counter) is read too
            names.setdefault(str(option), option)
        options = list(choices)
        read = [names[r] if r in names else options[int(r)] if r.isdigit() and int(r) < len(options)
                else None for r in raw]
        if all(v is not None for v in read):
            st.session_state[key] = read if multi else read[-1]
        else:  # not an option in any language: shown with a note, and dropped from the URL
            st.session_state.setdefault(_NOTES, {})[key] = ("&".join(f"{key}={r}" for r in raw), default, False)
    elif key in st.session_state and not browser_reported(key):
        # A value written from code reaches the browser only with the run that wrote it; a
        # rerun asked for while a link's first run was drawing can stop that run before the
        # widget is sent, and the browser then drew it at its default while the session and
        # the URL kept the link's value (smp=older policy shown as "on-policy").  Until the
        # browser reports the widget, each run sends the session's value again.
        st.session_state[key] = st.session_state[key]
    out = widget(label, key=key, **kwargs)
    _track(key, None, out, allowed=allowed, fmt=fmt, options=choices)
    if multi:
        want = [] if list(out) == list(default or []) else [_english(fmt, v) for v in out]
    else:
        want = [] if out == default else [_english(fmt, out)]
    if st.query_params.get_all(key) != want:
        if want:
            st.query_params[key] = want if multi else want[0]
        else:
            del st.query_params[key]
    return out


def _bool_text(b: bool) -> str:
    return str(b).lower()


def _num_text(x: float) -> str:
    return f"{x:g}"


def range_text(x: float) -> str:
    """A range limit as a user reads it: a whole number in full with thousands commas
    (``2,147,483,647``, never ``2.14748e+09``), any other number in 4 significant digits."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:.4g}"


def _numeric(
    widget: Callable[..., Any],
    label: str,
    key: str,
    *,
    min_value: float,
    max_value: float,
    value: Any,
    step: float,
    format: str | None = None,
    help: str | None = None,
    **kwargs: Any,
) -> Any:
    """A numeric ``widget`` bound to ``?key=``, with a note if the link's value was dropped.

    ``min_value``, ``max_value``, ``value`` and ``step`` are required; any other
    keyword goes to ``widget``.

    A number box (``st.number_input``) also gets its range at the end of its
    help (issue 20 §6: no caption under the box): a typed value outside the
    range is refused by the browser (red, and Enter does nothing).
    """
    if isinstance(value, (tuple, list)):  # a range slider: a link gives its two ends
        whole = all(isinstance(v, int) for v in value)
        allowed = (_("two whole numbers from {lo} to {hi}, its two ends") if whole else
                   _("two numbers from {lo} to {hi}, its two ends")).format(lo=range_text(min_value),
                                                                             hi=range_text(max_value))
    else:
        allowed = allowed_range(min_value, max_value, whole=isinstance(value, int))
    format = _format_for(format, key)
    if widget is st.number_input:
        limits = _("Allowed: {lo} to {hi}.").format(lo=range_text(min_value), hi=range_text(max_value))
        help = limits if not help else f"{help}\n\n{limits}"
    return _bound(
        widget, label, key, allowed=allowed, fmt=_num_text,
        min_value=min_value, max_value=max_value, value=value, step=step, format=format,
        help=help, **kwargs,
    )


_FIXED = re.compile(r"%\.(\d+)f")


def _format_for(fmt: str | None, key: str) -> str | None:
    """``fmt``, or ``%g`` where a fixed ``%.Nf`` would round the value the widget holds.

    A link may carry a value between the slider's steps (``?mu=0.005`` on a 0.05 grid); the page
    computes with it, so the slider must not print it as ``0.01``.  (The format is no part of a
    keyed widget's identity, so switching it keeps the value.)
    """
    m = _FIXED.fullmatch(fmt or "")
    if m is None:
        return fmt
    if key in st.session_state:
        value = st.session_state[key]
    else:
        raw = st.query_params.get_all(key)
        value = _as_number(raw[0]) if len(raw) == 1 else None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
        return fmt
    digits = int(m.group(1))
    return fmt if abs(round(value, digits) - value) <= 1e-12 * max(1.0, abs(value)) else "%g"


def allowed_range(lo: float, hi: float, *, whole: bool) -> str:
    """``"a whole number from 0 to 2,147,483,647"`` (or ``"a number from …"``), in the run's language."""
    if whole:
        return _("a whole number from {lo} to {hi}").format(lo=range_text(lo), hi=range_text(hi))
    return _("a number from {lo} to {hi}").format(lo=range_text(lo), hi=range_text(hi))


def slider(label: str, key: str, **kwargs: Any) -> Any:
    """``st.slider`` bound to ``?key=``; ints stay ints if all numbers are ints.

    Keywords as :func:`_numeric`: ``min_value``, ``max_value``, ``value``, ``step``
    (required), ``format``, ``help`` and any other ``st.slider`` argument.
    """
    return _numeric(st.slider, label, key, **kwargs)


def number(label: str, key: str, **kwargs: Any) -> Any:
    """``st.number_input`` bound to ``?key=``; ``min_value``/``max_value`` are required.

    Keywords as :func:`_numeric`: ``min_value``, ``max_value``, ``value``, ``step``
    (required), ``format``, ``help`` and any other ``st.number_input`` argument.
    """
    return _numeric(st.number_input, label, key, **kwargs)


def _index(options: Sequence[T], value: T | None) -> int:
    if value is None:
        return 0
    if value not in options:
        raise ValueError(f"default {value!r} is not one of the options {list(options)!r}")
    return list(options).index(value)


def _allowed(options: Sequence[Any], fmt: Callable[[Any], str]) -> str:
    shown = [fmt(o) for o in options]
    listed = ", ".join(shown[:8]) + (", …" if len(shown) > 8 else "")
    return _("one of {options}").format(options=listed)


def _labelled(
    options: Sequence[T] | Mapping[T, str], format_func: Callable[[Any], str] | None
) -> tuple[list[T], Callable[[Any], str]]:
    """The options and how each is shown: a mapping's keys, shown as its labels translated
    (``{"on": N_("on-policy")}``), unless ``format_func`` says otherwise; a sequence as ``str``."""
    if isinstance(options, Mapping):
        labels = options
        return list(labels), format_func or (lambda key: _(labels[key]))
    return list(options), format_func or str


def select(
    label: str,
    key: str,
    options: Sequence[T] | Mapping[T, str],
    *,
    value: T | None = None,
    format_func: Callable[[Any], str] | None = None,
    allowed: str | None = None,
    help: str | None = None,
    **kwargs: Any,
) -> T:
    """``st.selectbox`` bound to ``?key=<format_func(option)>``; ``value`` is the default option.

    ``allowed`` describes the usable values in the note on a dropped link
    value (default: the first options).
    """
    options, format_func = _labelled(options, format_func)
    return _bound(
        st.selectbox, label, key, allowed=allowed or _allowed(options, format_func), fmt=format_func,
        choices=options, options=options, index=_index(options, value), format_func=format_func,
        help=help, **kwargs,
    )


def select_slider(
    label: str,
    key: str,
    options: Sequence[T],
    *,
    value: T,
    format_func: Callable[[Any], str] = str,
    off_grid: Callable[[str], T | None] | None = None,
    allowed: str | None = None,
    help: str | None = None,
    **kwargs: Any,
) -> T:
    """``st.select_slider`` bound to ``?key=<format_func(option)>``.

    ``off_grid`` reads a link's text into a value the page accepts although it
    is not one of ``options`` (``n=1234`` on a 1–2–5 grid), or ``None``; such a
    value is added to the options in order, so the link reproduces exactly.
    The value the widget holds stays among the options on later runs too.
    ``allowed`` describes the usable values in the note on a dropped link value.
    """
    raw = _raw_from_url(_check_key(key))  # read before the widget registers the key
    opts = list(options)
    extra = [st.session_state.get(key)]
    if raw is not None and off_grid is not None:
        extra.append(off_grid(raw[-1]))
    for x in extra:
        if x is not None and x not in opts:
            opts = sorted([*opts, x])
    return _bound(
        st.select_slider, label, key, allowed=allowed or _allowed(opts, format_func),
        fmt=format_func, choices=opts, options=opts, value=value, format_func=format_func,
        help=help, **kwargs,
    )


def radio(
    label: str,
    key: str,
    options: Sequence[T] | Mapping[T, str],
    *,
    value: T | None = None,
    format_func: Callable[[Any], str] | None = None,
    horizontal: bool = True,
    help: str | None = None,
    **kwargs: Any,
) -> T:
    """``st.radio`` bound to ``?key=<format_func(option)>``."""
    options, format_func = _labelled(options, format_func)
    return _bound(
        st.radio, label, key, allowed=_allowed(options, format_func), fmt=format_func,
        choices=options, options=options, index=_index(options, value), format_func=format_func,
        horizontal=horizontal, help=help, **kwargs,
    )


def segmented(
    label: str,
    key: str,
    options: Sequence[T] | Mapping[T, str],
    *,
    value: T,
    format_func: Callable[[Any], str] | None = None,
    help: str | None = None,
    **kwargs: Any,
) -> T:
    """``st.segmented_control`` (one choice, always set) bound to ``?key=``."""
    options, format_func = _labelled(options, format_func)
    return _bound(
        st.segmented_control, label, key, allowed=_allowed(options, format_func),
        fmt=format_func, choices=options, options=options, default=value, required=True,
        format_func=format_func, help=help, **kwargs,
    )


def multiselect(
    label: str,
    key: str,
    options: Sequence[T] | Mapping[T, str],
    *,
    value: Sequence[T] = (),
    format_func: Callable[[Any], str] | None = None,
    help: str | None = None,
    **kwargs: Any,
) -> list[T]:
    """``st.multiselect`` bound to repeated parameters ``?key=a&key=b``."""
    options, format_func = _labelled(options, format_func)
    return _bound(
        st.multiselect, label, key, allowed=_allowed(options, format_func), fmt=format_func,
        choices=options, options=options, default=list(value), format_func=format_func,
        help=help, **kwargs,
    )


def toggle(label: str, key: str, *, value: bool = False, help: str | None = None, **kwargs: Any) -> bool:
    """``st.toggle`` bound to ``?key=true|false``."""
    return _bound(st.toggle, label, key, allowed=_("true or false"), fmt=_bool_text, value=value,
                  help=help, **kwargs)


def checkbox(label: str, key: str, *, value: bool = False, help: str | None = None, **kwargs: Any) -> bool:
    """``st.checkbox`` bound to ``?key=true|false``."""
    return _bound(st.checkbox, label, key, allowed=_("true or false"), fmt=_bool_text, value=value,
                  help=help, **kwargs)


def text(
    label: str,
    key: str,
    *,
    value: str,
    help: str | None = None,
    max_chars: int | None = None,
    **kwargs: Any,
) -> str:
    """``st.text_input`` bound to ``?key=``.

    Streamlit accepts any text from the URL; the caller validates it (see
    :func:`lab.widgets.distribution_picker`).
    """
    allowed = _("at most {n} characters").format(n=max_chars) if max_chars else _("text")
    return _bound(st.text_input, label, key, allowed=allowed, value=value, help=help,
                  max_chars=max_chars, **kwargs)


def rewrite(keys: Callable[[Any], bool], new_value: Callable[[Any], Any]) -> None:
    """Set every widget whose key ``keys`` accepts to ``new_value(old value)``.

    For an ``on_change`` callback, when writing widgets is allowed: one choice that
    others follow (the audit's exact-KL column follows its direction).
    """
    for key in [k for k in st.session_state if keys(k)]:
        st.session_state[key] = new_value(st.session_state[key])


def set_values(**values: Any) -> None:
    """Set bound widgets from code, e.g. a preset button's ``on_click``.

    Call it from a callback (``st.button(..., on_click=set_values, kwargs={...})``):
    callbacks run before the widgets are created, which is when Streamlit
    allows writing a widget's value.  The URL follows.
    """
    notes: dict[str, Any] = st.session_state.get(_NOTES, {})
    for key, v in values.items():
        st.session_state[_check_key(key)] = v
        notes.pop(key, None)
