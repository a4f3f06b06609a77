"""Save charts as PNG or SVG and tables as CSV.

Streamlit 1.67 draws Altair charts with vega-embed's own "…" action menu
turned off (``actions: false``); its hover toolbar offers "Download as PNG",
but no SVG.  So every chart also gets a small "Save" popover with PNG and SVG
buttons.  The files are produced by ``vl-convert`` only when a button is
clicked (Streamlit's deferred ``data=callable``), in a worker thread, so a
page rerun pays nothing for them; conversions are memoised per spec.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from i18n import N_, _

__all__ = ["chart_downloads", "csv_bytes", "csv_download", "slug", "to_png", "to_svg"]

#: Width in pixels of exported charts (on screen the width follows the container).
EXPORT_WIDTH = 900


def slug(name: str) -> str:
    """A file-name-safe version of ``name``: ``"k1 histogram"`` → ``"k1-histogram"``.

    Letters of any script are kept (a Chinese file name stays Chinese); spaces,
    slashes and other punctuation become ``-``.
    """
    s = re.sub(r"[^\w.-]+", "-", name).strip("-.").lower()
    return s or "chart"


def _sized(chart: alt.TopLevelMixin, width: int) -> alt.TopLevelMixin:
    """Give a single or layered chart a fixed width (exports cannot use the container's)."""
    if isinstance(chart, (alt.Chart, alt.LayerChart)):
        return chart.properties(width=width)
    return chart


@functools.lru_cache(maxsize=64)
def _svg(spec_json: str) -> str:
    import vl_convert as vlc

    return vlc.vegalite_to_svg(spec_json)


@functools.lru_cache(maxsize=64)
def _png(spec_json: str, scale: float) -> bytes:
    import vl_convert as vlc

    return vlc.vegalite_to_png(spec_json, scale=scale)


def to_svg(chart: alt.TopLevelMixin, width: int = EXPORT_WIDTH) -> str:
    """The chart as an SVG document."""
    return _svg(_sized(chart, width).to_json())


def to_png(chart: alt.TopLevelMixin, width: int = EXPORT_WIDTH, scale: float = 2.0) -> bytes:
    """The chart as a PNG image (``scale`` 2 gives a sharp image on a projector)."""
    return _png(_sized(chart, width).to_json(), scale)


def _download_button(
    label: str, data: Callable[[], bytes | str], stem: str, ext: str, mime: str, icon: str,
    **kwargs: Any,
) -> None:
    """A button that saves ``data()`` as ``<stem>.<ext>``, made only when clicked.

    ``data`` is called by Streamlit on the click (deferred), and the click does
    not rerun the page; the widget key is ``_<ext>_<stem>``.
    """
    st.download_button(label, data=data, file_name=f"{stem}.{ext}", mime=mime, on_click="ignore",
                       key=f"_{ext}_{stem}", icon=icon, **kwargs)


def chart_downloads(chart: alt.TopLevelMixin, name: str) -> None:
    """A small "Save" popover with PNG and SVG download buttons for ``chart``.

    ``name`` must be unique on the page; it is the file name and the widget key.
    """
    stem = slug(name)
    with st.popover(_("Save"), icon=":material/download:", type="tertiary"):
        _download_button(_("PNG image"), lambda: to_png(chart), stem, "png", "image/png",
                         ":material/image:")
        _download_button(_("SVG (vector)"), lambda: to_svg(chart), stem, "svg", "image/svg+xml",
                         ":material/draw:")


def csv_bytes(df: pd.DataFrame) -> bytes:
    """``df`` as UTF-8 CSV without the index.

    With a byte-order mark: spreadsheet programs then read non-ASCII headers
    (the Chinese UI's) as UTF-8 instead of the system's legacy code page;
    pandas and Python's csv module (``encoding="utf-8-sig"``) skip it.
    """
    return df.to_csv(index=False).encode("utf-8-sig")


def csv_download(df: pd.DataFrame, name: str, label: str = N_("Download CSV")) -> None:
    """A download button that saves ``df`` as ``<name>.csv``; ``label`` is translated here."""
    _download_button(_(label), lambda: csv_bytes(df), slug(name), "csv", "text/csv",
                     ":material/download:", type="tertiary")
