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

from charts.palette import LIFTED_IN_DARK, TEXT_COLOR, TEXT_LIKE, color, label
from kl_core.estimators import ESTIMATORS
from lab import i18n
from lab.export import chart_downloads, csv_download
from lab.gc_policy import freeze_new_imports
from lab.i18n import _

T = TypeVar("T")

__all__ = [
    "caption",
    "chart",
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
    ``tests/app/test_chart_spec.py`` checks both paths agree on every chart
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
    st.vega_lite_chart(_spec_once(ch), width="stretch")
    if not (caption or downloads):
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        if caption:
            st.markdown(f":material/visibility: {caption}", width="stretch")
        if downloads:
            chart_downloads(ch, name)


def table(df: pd.DataFrame, *, name: str, caption: str | None = None, **kwargs: Any) -> None:
    """Show ``df`` (``st.dataframe``), its caption, and a CSV download."""
    freeze_new_imports()
    st.dataframe(df, hide_index=True, width="stretch", **kwargs)
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        if caption:
            st.markdown(f":material/visibility: {caption}", width="stretch")
        csv_download(df, name)


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
    for value in TEXT_LIKE:
        rules.append(f"{svg} .mark-rect>[fill='{value}' i]"  # i18n: ok (CSS)
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

#: Page-wide CSS (:func:`page_style`): a grid panel's box grows from PANEL_MIN_PX
#: and wraps; markdown tables scroll in their own box; chart colours follow the
#: dark theme (:func:`_theme_css`); the run's spinner floats (:func:`run_status`).
PAGE_CSS = _GRID_CSS + _TABLE_CSS + _theme_css() + _RUN_STATUS_CSS


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


def metric_row() -> Any:
    """A row for ``st.metric``'s that wraps onto more lines where the page is narrow.

    Use as ``with ui.metric_row(): st.metric(...)``: numbers are never cut to
    "4.633…" on a small screen, as they are in fixed columns.
    """
    return st.container(horizontal=True, gap="medium", wrap=True)


def note(kind: str, text: str, icon: str) -> None:
    """A message box: ``kind`` is ``"warning"``, ``"info"`` or ``"error"`` (Streamlit's boxes)."""
    getattr(st, kind)(text, icon=icon)


def formula(latex: str) -> None:
    """Display LaTeX as maths (KaTeX)."""
    st.latex(latex)


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
