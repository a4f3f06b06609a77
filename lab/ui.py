"""Page building blocks: a chart with its caption, formulas, and the core's source.

A page reads like a short lesson: a question, a picture, the formula, what to
notice.  These helpers keep every page's pictures and captions looking the
same:

* :func:`chart` – draw an Altair chart full width, the one-line "what to look
  at" caption under it, and its PNG/SVG save menu;
* :func:`table` – a data frame with its caption and a CSV download;
* :func:`caption` – the "what to look at" line on its own;
* :func:`formula`, :func:`estimator_formula`, :func:`estimator_name` – maths in
  the estimator's chart colour;
* :func:`show_source` – a ``kl_core`` function's code in an expander, so a
  student sees the formula and the code that computes it side by side;
* :func:`fail` – a clear error on the page, then stop (no traceback);
  :func:`error_text` – a core error (a ``ValueError`` the core raised) in the
  run's language.

Texts passed in are shown as given: the caller translates them (``_()``).
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, TypeVar

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
from altair.utils.schemapi import SchemaBase

import i18n
from charts.palette import LIFTED_IN_DARK, REFERENCE_TICKS, TEXT_COLOR, TEXT_LIKE, color, label
from i18n import _
from kl_core.estimation.estimators import ESTIMATORS
from lab.a11y import A11Y_CSS
from lab.export import chart_downloads, csv_download
from lab.format import (
    PAST_DOUBLE_LOGS,
    csv_frame,
    past_number_columns,
    printf_text_column,
    printf_text_columns,
    text_column,
)
from lab.gc_policy import freeze_new_imports

T = TypeVar("T")

__all__ = [
    "accessible_spec",
    "ANSWER_KEY",
    "answer",
    "caption",
    "card",
    "chart",
    "chart_description",
    "numbers_tables",
    "plain",
    "show_numbers",
    "grid",
    "metric_row",
    "page_style",
    "run_status",
    "note",
    "error_text",
    "estimator_formula",
    "estimator_name",
    "fail",
    "formula",
    "glossary",
    "show_source",
    "table",
]


def caption(text: str) -> None:
    """The one-line "what to look at" under a chart, in normal reading size."""
    st.markdown(f":material/visibility: {text}")


def _inline(node: Any, datasets: dict[str, list]) -> Any:
    """Write the rows inline wherever a layer names a dataset: ``{"name": d, "values": rows}``."""
    if isinstance(node, dict):
        if set(node) == {"name"} and node["name"] in datasets:
            return {"name": node["name"], "values": datasets[node["name"]]}
        return {k: _inline(v, datasets) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, datasets) for v in node]
    return node


def _spec(ch: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart's Vega-Lite spec, built the fast way.

    Altair's ``to_dict`` deep-copies the chart and every data row (~7 ms per
    chart), and Streamlit turns each top-level dataset into an Arrow table on
    every rerun; together that was most of a page's rerun time.  Our builders
    are Altair objects whose insides are plain Vega-Lite dicts, so for them the
    spec is just those dicts (:func:`_raw`), plus the ``$schema`` and theme
    config that ``to_dict`` adds; the rows (≤ 5,000, checked by the builders)
    are written inline where each layer names its dataset.  Charts with
    ``params`` (selections) take Altair's own path, which lifts them.
    ``tests/charts/test_chart_spec.py`` checks both paths agree on every chart
    of every page.
    """
    datasets = ch.datasets if isinstance(ch.datasets, dict) else {}
    # The chart's fields without its datasets (written inline below); no copy of the chart,
    # which for a LayerChart would deep-copy every layer again.
    spec = _raw({k: v for k, v in ch._kwds.items() if k != "datasets"})
    if _has_params(spec):
        bare = ch.copy(deep=False)
        bare.datasets = alt.Undefined
        spec = bare.to_dict(validate=False)
    else:
        theme = alt.theme.get()() if alt.theme.get() else {}
        config = _merge(theme.get("config", {}), spec.get("config", {}))
        spec = {"$schema": alt.SCHEMA_URL, **spec}
        if config:
            spec["config"] = config
    native = {name: [_native_row(r) for r in rows] for name, rows in datasets.items()}
    return _inline(spec, native)


def _raw(node: Any) -> Any:
    """Altair objects and dicts as plain dicts, ``Undefined`` dropped."""
    if isinstance(node, SchemaBase):
        node = node._kwds
    if isinstance(node, dict):
        return {k: _raw(v) for k, v in node.items() if v is not alt.Undefined}
    if isinstance(node, (list, tuple)):
        return [_raw(v) for v in node]
    return node


def _has_params(node: Any) -> bool:
    if isinstance(node, dict):
        return "params" in node or any(_has_params(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_params(v) for v in node)
    return False


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, recursively (Altair's theme merge)."""
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _native_row(row: dict[str, Any]) -> dict[str, Any]:
    # Builders may hand numpy scalars (np.int64 is not JSON-serialisable).
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}


#: Specs of the charts drawn lately, by ``id`` of the chart object: a chart kept
#: across reruns (:func:`lab.cache.chart`, :func:`lab.cache.estimator_chart`) is
#: converted once.  An entry goes when its chart is garbage (weak reference),
#: and the oldest goes beyond _SPECS_MAX (a spec holds the chart's rows again).
_SPECS: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}
_SPECS_MAX = 24
_SPECS_LOCK = threading.Lock()


def _spec_once(ch: alt.TopLevelMixin) -> dict[str, Any]:
    """:func:`_spec` of ``ch``, memoised while ``ch`` lives (charts are not changed once drawn)."""
    key = id(ch)
    hit = _SPECS.get(key)
    if hit is not None and hit[0]() is ch:
        return hit[1]
    spec = _spec(ch)
    try:
        ref = weakref.ref(ch, lambda _r, key=key: _SPECS.pop(key, None))
    except TypeError:  # not weak-referenceable: no memo
        return spec
    with _SPECS_LOCK:
        _SPECS[key] = (ref, spec)
        while len(_SPECS) > _SPECS_MAX:
            try:
                oldest = next(iter(_SPECS))
            except (StopIteration, RuntimeError):  # a weak reference's callback removed one meanwhile
                break
            _SPECS.pop(oldest, None)
    return spec


def chart(ch: alt.TopLevelMixin, *, name: str, caption: str | None = None,
          downloads: bool = True) -> None:
    """Draw the Altair chart ``ch`` at container width, its caption and a Save menu.

    ``name`` must be unique on the page (it keys the download buttons and
    names the files).  ``downloads=False`` leaves the Save menu out (small
    multiples whose numbers are in a table with its own CSV).
    """
    freeze_new_imports()
    # The spec goes to st.vega_lite_chart unvalidated: Altair's JSON-schema
    # validation costs ~20 ms per chart on every rerun; tests/app/test_lab.py
    # validates every builder instead.  The element is the same one
    # st.altair_chart draws (Streamlit theme, hover toolbar, full width).
    spec = _spec_once(ch)
    described = chart_description(spec, caption)
    st.vega_lite_chart(accessible_spec(spec, described), width="stretch")
    if caption or downloads:
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            if caption:
                st.markdown(f":material/visibility: {caption}", width="stretch")
            if downloads:
                chart_downloads(ch, name)
    show_numbers(ch, spec, name=name, description=described)


# -- Charts for people who cannot see them (issue 21) -------------------------------------

_MD = re.compile(r"\*\*|__|`|:material/[a-z_]+:|:[a-z]+\[|\]\{[^}]*\}")
_TEX = {r"\lambda": "λ", r"\theta": "θ", r"\pi": "π", r"\mu": "μ", r"\sigma": "σ",
        r"\beta": "β", r"\nabla": "∇", r"\mathbb{E}": "E", r"\log": "log", r"\cdot": "·",
        r"\le": "≤", r"\ge": "≥", r"\approx": "≈", r"\infty": "∞", r"\to": "→"}


def plain(text: str) -> str:
    """Markdown and inline LaTeX as plain words for a screen reader (``**``, ``$``, ``\\lambda`` → λ)."""
    for tex, char in _TEX.items():
        text = text.replace(tex, char)
    text = _MD.sub("", text).replace("$", "")
    text = re.sub(r"\\[a-zA-Z]+", "", text).replace("{", "").replace("}", "")
    return re.sub(r"\s+", " ", text).strip()


def _title_text(title: Any) -> str:
    if isinstance(title, dict):
        title = title.get("text", "")
    if isinstance(title, (list, tuple)):
        title = " ".join(str(t) for t in title)
    return str(title or "").strip()


def _units(node: Any, data: str | None = None) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Every single-view layer of a spec with the name of its dataset (inherited from above)."""
    if not isinstance(node, dict):
        return
    own = node.get("data")
    if isinstance(own, dict) and "name" in own:
        data = own["name"]
    if "mark" in node:
        yield node, data
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in node.get(key, []) or []:
            yield from _units(child, data)
    if isinstance(node.get("spec"), dict):
        yield from _units(node["spec"], data)


def _axis_titles(spec: dict[str, Any]) -> dict[str, str]:
    """The title of each position channel (``x``, ``y``): the first layer that gives one."""
    titles: dict[str, str] = {}
    for unit, _data in _units(spec):
        for channel, enc in (unit.get("encoding") or {}).items():
            if not isinstance(enc, dict) or channel in titles:
                continue
            axis = enc.get("axis") if isinstance(enc.get("axis"), dict) else {}
            legend = enc.get("legend") if isinstance(enc.get("legend"), dict) else {}
            title = _title_text(enc.get("title") or axis.get("title") or legend.get("title"))
            if title:
                titles[channel] = title
    return titles


def chart_description(spec: dict[str, Any], caption: str | None = None) -> str:
    """One sentence saying what a chart shows: its title and its caption, else its axes.

    Vega draws it as the chart's accessible name (the SVG's ``aria-label``).
    """
    title = plain(_title_text(spec.get("title")))
    if caption:
        what = plain(caption)
    else:
        axes = _axis_titles(spec)
        x, y = plain(axes.get("x", "")), plain(axes.get("y", ""))
        what = (_("{y} against {x}.").format(y=y, x=x) if x and y else (y or x))
    if title and what:
        return _("Chart “{title}”: {what}").format(title=title, what=what)
    return _("Chart: {what}").format(what=what or title)


def accessible_spec(spec: dict[str, Any], description: str) -> dict[str, Any]:
    """``spec`` with its description, and its marks and guides hidden from assistive technology.

    Vega would otherwise give every bar, point and axis an automatic English
    label ("left: 0.1; share: 0.02"), hundreds per chart, or none at all to
    the marks without fields (svg-img-alt).  The description and the "Show the
    numbers" table say what the chart shows, in the page's language.  A shallow
    copy: the memoised spec is shared.
    """
    return {**spec, "description": description, "config": {**spec.get("config", {}), "aria": False}}


_NUMBERS_KEY = "klnum"
#: Pixels of a long "Show the numbers" table on screen; the rest scrolls in its box.
_NUMBERS_HEIGHT = 420
#: Channels whose field names a series (legend), and those that carry a label.
_SERIES = ("color", "fill", "stroke", "strokeDash", "shape")


def numbers_tables(spec: dict[str, Any], datasets: dict[str, list]) -> tuple[pd.DataFrame | None, list[str]]:
    """The table behind a chart: its largest dataset with the axes' titles as headers; and its labels.

    A field on ``x``/``y`` takes the axis title (``…, from``/``…, to`` for a
    range: a bin, an error bar); a series field takes the legend's title or
    "series".  Fields no channel shows are left out.  The labels are the
    texts written on the chart ("true KL = 0.5").
    """
    axes = _axis_titles(spec)
    headers: dict[str, dict[str, str]] = {}
    labels: list[str] = []
    for unit, data in _units(spec):
        if data not in datasets:
            continue
        enc = unit.get("encoding") or {}
        fields = {ch: e["field"] for ch, e in enc.items() if isinstance(e, dict) and isinstance(e.get("field"), str)}
        cols = headers.setdefault(data, {})
        for channel, field in fields.items():
            if field in cols:
                continue
            base = channel[0] if channel in ("x", "x2", "y", "y2") else channel
            title = axes.get(base, "")
            if channel in ("x", "y") and f"{channel}2" in fields and title:
                cols[field] = _("{axis}, from").format(axis=title)
            elif channel in ("x2", "y2") and title:
                cols[field] = _("{axis}, to").format(axis=title)
            elif channel in ("x", "y"):
                cols[field] = title or channel
            elif channel in _SERIES:
                cols.setdefault(field, axes.get(channel) or _("series"))
            elif channel == "text":
                labels += [str(r.get(field)) for r in datasets[data] if r.get(field) not in (None, "")]
    best = max((d for d in headers if headers[d]), key=lambda d: (len(datasets[d]), len(headers[d])), default=None)
    if best is None:
        return None, list(dict.fromkeys(labels))
    cols = headers[best]
    names: dict[str, str] = {}
    for field, header in cols.items():
        while header in names.values():
            header += " "
        names[field] = header
    rows = [{names[f]: _cell(r.get(f)) for f in cols} for r in datasets[best]]
    return pd.DataFrame(rows, columns=list(names.values())), list(dict.fromkeys(labels))


def _cell(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        from lab.format import number

        return number(v)
    return "" if v is None else v


def show_numbers(ch: alt.TopLevelMixin, spec: dict[str, Any], *, name: str, description: str) -> None:
    """"Show the numbers": the chart's data as a real table, in an expander the keyboard can open.

    The table is built only when the expander is opened (``on_change="rerun"``),
    so it costs nothing on the reruns of those who don't.
    """
    with st.expander(_("Show the numbers"), key=f"{_NUMBERS_KEY}-{name}", on_change="rerun",
                     icon=":material/table:") as box:
        if not box.open:
            return
        datasets = ch.datasets if isinstance(ch.datasets, dict) else {}
        df, labels = numbers_tables(spec, datasets)
        st.markdown(description)
        if df is not None:
            # A long table scrolls in its own box (the keyboard can reach it: lab.a11y).
            st.table(df, hide_index=True, height=_NUMBERS_HEIGHT if len(df) > 12 else "content")
        if labels:
            st.markdown(_("Written on the chart: {labels}").format(labels="; ".join(labels)))


def table(df: pd.DataFrame, *, name: str, caption: str | None = None, **kwargs: Any) -> None:
    """Show ``df`` (``st.dataframe``), its caption, and a CSV download.

    A float column with a value past Streamlit's number columns (:data:`lab.format.NUMBER_COLUMN_LIMIT`)
    is shown as text, right-aligned, in 4 significant digits; the CSV keeps the numbers.  A cell
    past the largest double (:func:`lab.format.with_past_double_logs`) is written from its log,
    in the table and in the CSV.  A column Streamlit would write misleadingly is shown as text
    (:func:`lab.format.printf_text_columns`): a printf format holding an infinity (the browser would write
    "Infinity") or a value that is not zero but prints as zero ("-0.0000"), and a ``"percent"`` column, which
    :func:`lab.format.share` writes (Streamlit's two decimals read 3.2e-5 as "0%").
    """
    freeze_new_imports()
    shown = df.copy()
    shown.attrs = {}  # Streamlit sends attrs as JSON: a NaN in them breaks the table in the browser
    if big := past_number_columns(df):
        config = dict(kwargs.get("column_config") or {})
        for col in big:
            old = config.get(col)
            shown[col] = text_column(df[col], df.attrs.get(PAST_DOUBLE_LOGS, {}).get(col))
            config[col] = st.column_config.TextColumn(
                help=old.get("help") if isinstance(old, dict) else None, alignment="right")
        kwargs = {**kwargs, "column_config": config}
    formats = {col: fmt for col, c in (kwargs.get("column_config") or {}).items()
               if isinstance(c, dict) and isinstance(fmt := (c.get("type_config") or {}).get("format"), str)}
    if inf := printf_text_columns(shown, formats):
        config = dict(kwargs["column_config"])
        for col in inf:
            shown[col] = printf_text_column(shown[col], formats[col])
            config[col] = st.column_config.TextColumn(help=config[col].get("help"), alignment="right")
        kwargs = {**kwargs, "column_config": config}
    st.dataframe(shown, hide_index=True, width="stretch", **kwargs)
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        if caption:
            st.markdown(f":material/visibility: {caption}", width="stretch")
        csv_download(csv_frame(df), name)


#: A panel of :func:`grid` is never narrower than this: below it tick labels run
#: together and titles are cut (issue 10), so panels wrap onto a new row instead.
PANEL_MIN_PX = 260
_PANEL_KEY = "klpanel"
#: A grid panel's box grows from PANEL_MIN_PX and wraps.  Streamlit puts a keyed
#: container's class on the block inside the flex item, hence ``:has``.
_GRID_CSS = (
    f"div:has(> [class*='st-key-{_PANEL_KEY}-']){{min-width:min({PANEL_MIN_PX}px,100%);"  # i18n: ok (CSS)
    f"flex:1 1 {PANEL_MIN_PX}px !important;}}"  # i18n: ok (CSS)
)


def _theme_css() -> str:
    """CSS that keeps chart text and black lines visible in the dark theme (issue 10 §5).

    Streamlit gives a chart's element ``color-scheme: dark`` in the dark theme,
    so ``light-dark()`` picks the spec's own colour in the light theme and, in
    the dark one, the page's text colour (``currentColor``) for black and text
    colours (``charts.palette.TEXT_LIKE``), or a half-and-half mix with it for
    the dark colours of ``charts.palette.LIFTED_IN_DARK``.  CSS beats the SVG's
    ``fill``/``stroke`` attributes, so every chart of every page gets it
    without a change to its spec, and a switch of theme needs no rerun.
    """
    svg = "[data-testid='stVegaLiteChart'] svg"
    rules = []
    for value, dark in [*((c, "currentColor") for c in TEXT_LIKE),
                        *((c, f"color-mix(in srgb,{c} 45%,currentColor)") for c in LIFTED_IN_DARK)]:
        for prop in ("fill", "stroke"):
            if prop == "stroke" and value == TEXT_COLOR:
                continue  # Streamlit's dark theme draws its grid lines in this very grey
            rules.append(f"{svg} [{prop}='{value}' i]{{{prop}:light-dark({value},{dark});}}")
    # A black bar or cell often carries a white number: in the dark theme it turns a mid
    # grey (visible on the dark page, the number still readable), not the text colour.
    # Reference ticks are rects too, but thin lines: they keep the text colour.
    for value in TEXT_LIKE:
        rules.append(f"{svg} .mark-rect:not(.{REFERENCE_TICKS}_marks)>[fill='{value}' i]"  # i18n: ok (CSS)
                     f"{{fill:light-dark({value},color-mix(in srgb,currentColor 45%,#000));}}")
    # A label's white halo (stroke, or a thick white copy underneath) is the page's
    # background in the dark theme, not a white blot.
    rules.append(f"{svg} text[stroke='white' i]{{stroke:light-dark(white,Canvas);}}"  # i18n: ok (CSS)
                 f"{svg} text[stroke='white' i][fill='white' i]{{fill:light-dark(white,Canvas);}}")
    return "".join(rules)


#: A table written in markdown or HTML scrolls sideways in its own box (as GitHub
#: draws them) instead of widening the page on a phone (issue 10 §3).
_TABLE_CSS = (
    "[data-testid='stMarkdownContainer'] table"
    "{display:block;width:max-content;max-width:100%;overflow-x:auto;}"
)

#: A table wider than its box scrolls sideways (Glide's canvas under a scroller).  On a phone the
#: cut-off column showed the left digits of a number ("0.00" of 0.0041) as if they were all of
#: it, so the grid's right edge fades out while more columns lie past it.  The fade follows the
#: scroller's own scroll timeline (:data:`TABLE_EDGE_PX` at the start, none at the end); where a
#: browser has no scroll timelines the animation ends at once and nothing fades, as before.
TABLE_EDGE_PX = 56
_TABLE_FADE_CSS = (
    # The gradient is stretched past the box's right edge as the table scrolls: at the end no part fades.
    f"@keyframes kl-table-edge{{from{{mask-size:100% 100%;}}to{{mask-size:calc(100% + {TABLE_EDGE_PX}px) 100%;}}}}"  # i18n: ok (CSS)
    "[data-testid='stDataFrame'] .stDataFrameGlideDataEditor:not(.dvn-scroller){timeline-scope:--kl-table-x;}"
    "[data-testid='stDataFrame'] .dvn-scroller{scroll-timeline:--kl-table-x x;}"
    "[data-testid='stDataFrame'] .dvn-underlay > canvas{mask-repeat:no-repeat;"
    f"mask-image:linear-gradient(to right,#000 calc(100% - {TABLE_EDGE_PX}px),transparent);"
    f"mask-size:calc(100% + {TABLE_EDGE_PX}px) 100%;"
    "animation:kl-table-edge linear both;animation-timeline:--kl-table-x;}"
)

_CARD_KEY = "klcard"
#: On a phone a card's padding is halved, so that a chart inside it keeps
#: the 260 px a chart needs (a 320 px screen leaves 256 px inside Streamlit's).
_CARD_CSS = (
    f"@media (max-width:420px){{[class*='st-key-{_CARD_KEY}-']"  # i18n: ok (CSS)
    "{padding-left:0.5rem !important;padding-right:0.5rem !important;}}"
)


def card(name: str) -> Any:
    """A bordered box (``st.container(border=True)``) with a narrower inner margin on a phone.

    ``name`` makes its CSS class (``st-key-klcard-<name>``); use it once per run.
    """
    return st.container(border=True, key=f"{_CARD_KEY}-{name}")


_RUN_STATUS_KEY = "klrunstatus"
#: :func:`run_status`'s box floats at the top of the screen (under Streamlit's header,
#: whose Stop and menu stay clickable), over the page: a spinner
#: there is seen wherever the reader has scrolled to, and never pushes the page down
#: under a slider being dragged.  Its colours are the page's text colour, tinted and
#: blurred, so it reads in both themes.
_RUN_STATUS_CSS = (
    f"div:has(> .st-key-{_RUN_STATUS_KEY}){{position:fixed;top:3.5rem;left:50%;"  # i18n: ok (CSS)
    "transform:translateX(-50%);z-index:999990;width:max-content !important;max-width:90vw;}"
    f".st-key-{_RUN_STATUS_KEY} [data-testid='stSpinner']{{padding:0.35rem 0.9rem;white-space:nowrap;"
    "border-radius:999px;backdrop-filter:blur(10px);"
    "background:color-mix(in srgb,currentColor 10%,transparent);"
    "border:1px solid color-mix(in srgb,currentColor 30%,transparent);}"
)

#: The sidebar glossary (:func:`glossary`): a narrow list, its entries a little smaller than the page's prose.
_GLOSSARY_CSS = (
    ".st-key-klglossary ul{padding-left:1rem;margin:0;}"  # i18n: ok (CSS)
    ".st-key-klglossary li{font-size:0.9rem;line-height:1.45;margin:0 0 0.4rem 0;}"
)

#: Page-wide CSS (:func:`page_style`): a grid panel's box grows from PANEL_MIN_PX
#: and wraps; markdown tables scroll in their own box; chart colours follow the
#: dark theme (:func:`_theme_css`); the run's spinner floats (:func:`run_status`).
#: A segmented control wider than its column wraps its options onto a second line; Streamlit
#: scrolls it sideways with no scrollbar, so options past the edge looked absent.
_SEGMENTED_CSS = "[data-testid='stButtonGroup'] > div:has(> button){flex-wrap:wrap;overflow-x:visible;}"

PAGE_CSS = _SEGMENTED_CSS + _GRID_CSS + _TABLE_CSS + _TABLE_FADE_CSS + _CARD_CSS + _theme_css() + _RUN_STATUS_CSS + _GLOSSARY_CSS + A11Y_CSS


def run_status() -> Any:
    """An empty box floating at the top of the screen, for the whole run's spinner.

    ``app.py`` runs the page inside ``with run_status().spinner(...)``: a run
    that takes over half a second (a cold shared link, a preset) shows the
    spinner there; a faster one shows nothing.
    """
    return st.container(key=_RUN_STATUS_KEY)


def page_style() -> None:
    """Add the lab's page-wide CSS; ``app.py`` calls it once a run, before the page."""
    st.html(f"<style>{PAGE_CSS}</style>")


def grid(items: Sequence[T], per_row: int = 3, *, key: str = "grid") -> Iterator[tuple[T, Any]]:
    """Yield ``(item, panel)``: side by side while each panel is at least PANEL_MIN_PX wide.

    ``per_row`` panels fit a row at 1280×800 (the sidebar open); on a smaller
    screen they wrap, two to a row at 1024 px and one on a phone, rather than
    shrink.  ``key`` must be unique on the page (it keys the panels).
    """
    if per_row < 1:
        raise ValueError(f"per_row must be at least 1, got {per_row}")
    for start in range(0, len(items), per_row):
        row = items[start : start + per_row]
        with st.container(horizontal=True, wrap=True, gap="small"):
            panels = [st.container(key=f"{_PANEL_KEY}-{key}-{start + i}") for i in range(len(row))]
        yield from zip(row, panels, strict=True)


#: The key of :func:`answer`'s box: the browser tests find a page's answer by it.
ANSWER_KEY = "klanswer"


def answer(text: str) -> None:
    """A page's one-sentence answer to its question, computed from the numbers on screen.

    It sits between the question and the chart that shows it (issue 20, "the
    point first"), in a box with a stable class, ``st-key-klanswer``.
    """
    with st.container(key=ANSWER_KEY):
        st.markdown(text)


def metric_row() -> Any:
    """A row for ``st.metric``'s that wraps onto more lines where the page is narrow.

    Use as ``with ui.metric_row(): st.metric(...)``: numbers are never cut to
    "4.633…" on a small screen, as they are in fixed columns.
    """
    return st.container(horizontal=True, gap="medium", wrap=True)


def note(kind: str, text: str, icon: str) -> None:
    """A message box: ``kind`` is ``"warning"``, ``"info"`` or ``"error"`` (Streamlit's boxes)."""
    getattr(st, kind)(text, icon=icon)


#: The key of :func:`glossary`'s box (``st-key-klglossary``): the browser tests find it by it.
GLOSSARY_KEY = "klglossary"


def glossary(url_path: str | None) -> None:
    """The sidebar's "Symbols" expander: every symbol the page uses, its TeX and meaning (:mod:`lab.notation`).

    ``app.py`` draws it once a run, for the page it is about to run.
    """
    from lab import notation

    with st.sidebar.container(key=GLOSSARY_KEY), st.expander(_("Symbols on this page"), icon=":material/functions:"):
        st.markdown("\n".join("- " + line for line in notation.glossary_lines(url_path)))
        st.caption(_("One notation on every page: the first argument of KL is the distribution the "
                     "samples come from."))


def formula(latex: str) -> None:
    """Display LaTeX as maths (KaTeX)."""
    st.latex(latex)


def formulas(*parts: str, joined: bool = False) -> None:
    """Display formulas side by side where they fit, one under another on a narrow screen
    (a formula wider than a 390-px phone would only scroll inside its box); ``joined``: the parts are one
    equation cut at a relation sign, so no gap is left between them."""
    with st.container(horizontal=True, wrap=True, horizontal_alignment="center", gap=None if joined else "medium"):
        for tex in parts:
            st.latex(tex, width="content")


def estimator_name(key: str) -> str:
    """Markdown for the estimator's display name, bold, in its chart colour."""
    return f':color[**{label(key)}**]{{foreground="{color(key)}"}}'


def estimator_formula(key: str) -> None:
    """The estimator's per-sample formula, its symbol in its chart colour."""
    tex = ESTIMATORS[key].latex
    lhs, sep, rhs = tex.partition("=")
    if sep:
        tex = rf"\color{{{color(key)}}}{{{lhs.strip()}}} = {rhs.strip()}"
    st.latex(tex)


@functools.lru_cache(maxsize=256)
def _without_docstring(func: Callable[..., Any]) -> str:
    source = textwrap.dedent(inspect.getsource(func))
    tree = ast.parse(source)
    node = tree.body[0]
    body = getattr(node, "body", [])
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        lines = source.splitlines()
        start, end = body[0].lineno - 1, body[0].end_lineno or body[0].lineno
        source = "\n".join(lines[:start] + lines[end:])
    # ``@docfill`` only writes the docstring this view leaves out: the code starts at ``def``.
    decorators = [d for d in getattr(node, "decorator_list", [])
                  if isinstance(d, ast.Call) and getattr(d.func, "id", "") == "docfill"]
    if decorators:
        lines = source.splitlines()
        drop = {i for d in decorators for i in range(d.lineno - 1, d.end_lineno or d.lineno)}
        source = "\n".join(line for i, line in enumerate(lines) if i not in drop)
    return source


def show_source(func: Callable[..., Any], *, expanded: bool = False) -> None:
    """Show the source of a ``kl_core`` function in an expander.

    The docstring's first line is shown as text and the rest of the docstring
    is dropped, so the code itself fits on a projector screen.  The core's
    docstrings are English, like its code: in another language only the code
    is shown.
    """
    name = f"{func.__module__}.{func.__qualname__}"
    with st.expander(_("Code: `{name}`").format(name=name), expanded=expanded, icon=":material/code:"):
        doc = inspect.getdoc(func)
        if doc and i18n.language() == "en":
            st.markdown(doc.splitlines()[0])
        st.code(_without_docstring(func), language="python")


def error_text(exc: BaseException) -> str:
    """What went wrong, in the run's language: a core ``InputError``'s template translated, else ``str(exc)``.

    Use it wherever a page shows a caught core error:
    ``ui.fail(_("**This file can't be audited.** {why}").format(why=ui.error_text(exc)))``.
    """
    return i18n.message(exc)


def fail(message: object) -> NoReturn:
    """Show ``message`` as an error where the page currently is, then stop the run.

    ``message`` is a sentence in the run's language, or a core error or
    message (shown with :func:`error_text`).
    """
    st.error(i18n.message(message), icon=":material/error:")
    st.stop()
    raise AssertionError("unreachable")  # st.stop raises; this keeps type checkers honest
