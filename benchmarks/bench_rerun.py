"""How long a page takes to re-render after a widget change (server side).

For every page of the app, at its default settings: run it once (warm the
caches), then repeatedly change its first slider or number input to a new
value and back, timing each ``AppTest.run()``.  Prints the median and the
90th percentile per page.  The target (issue 3) is a median under 150 ms at
the default settings.

Run from the repository root::

    uv run python benchmarks/bench_rerun.py [--repeats 15]

Notes
-----
* A changed value that was already computed is served from ``st.cache_data``,
  as it is for a user moving a slider back and forth; the first visit to a
  new value is timed separately ("cold change").
* AppTest runs the page script in-process, without a browser: the figure is
  the server-side script time, which is what ``st.cache_data`` and the chart
  builders control.  Browser rendering comes on top.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.pages import PAGES  # noqa: E402


def _first_numeric_widget(at: AppTest):
    """The first slider or number input; a range slider, then a segmented control, only if
    there is nothing else (the audit page has only column pickers and a direction)."""
    for kind in ("slider", "number_input"):
        widgets = [w for w in getattr(at, kind) if isinstance(w.value, (int, float))]
        if widgets:
            return kind, widgets[0]
    ranges = [w for w in at.slider if isinstance(w.value, tuple)]
    if ranges:
        return "slider", ranges[0]
    groups = [w for w in at.segmented_control if len(w.options) > 1]
    if groups:
        return "segmented_control", groups[0]
    return None, None


def _other_value(widget) -> float | int | tuple | str:
    if hasattr(widget, "format_func"):  # a segmented control: another of its options
        # AppTest shows only the labels; the pages' format_func is a dict's .get, whose keys
        # are the options themselves.
        return next(iter(k for k in widget.format_func.__self__ if k != widget.value))
    lo = getattr(widget, "min", None)
    hi = getattr(widget, "max", None)
    step = getattr(widget, "step", None) or 1
    v = widget.value
    if isinstance(v, tuple):  # a range slider: pull its upper end in by one step
        return (v[0], max(v[0], v[1] - step))
    candidate = v + step
    if hi is not None and candidate > hi:
        candidate = v - step
    if lo is not None and candidate < lo:
        candidate = v
    return type(v)(candidate)


def bench_page(path: str, repeats: int) -> dict[str, float | str]:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    if path != PAGES[0].path:
        at.switch_page(path).run()
    if at.exception:
        return {"page": path, "error": str(at.exception[0].value)[:80]}
    kind, widget = _first_numeric_widget(at)
    if widget is None:
        return {"page": path, "error": "no slider or number input"}
    key = widget.key
    first, second = widget.value, _other_value(widget)
    t0 = time.perf_counter()
    getattr(at, kind)(key=key).set_value(second).run()
    cold = time.perf_counter() - t0
    times = []
    for i in range(repeats):
        value = first if i % 2 == 0 else second
        t0 = time.perf_counter()
        getattr(at, kind)(key=key).set_value(value).run()
        times.append(time.perf_counter() - t0)
    times.sort()
    return {
        "page": path,
        "widget": f"{kind} '{key}' {first} ↔ {second}",
        "cold": cold,
        "median": statistics.median(times),
        "p90": times[int(0.9 * (len(times) - 1))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"machine   {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'page':32s} {'widget changed':34s} {'cold ms':>8s} {'median ms':>10s} {'p90 ms':>8s}")
    for page in PAGES:
        r = bench_page(page.path, args.repeats)
        if "error" in r:
            print(f"{page.path:32s} skipped: {r['error']}")
            continue
        print(
            f"{page.path:32s} {r['widget'][:34]:34s} {1000 * r['cold']:8.0f} "
            f"{1000 * r['median']:10.0f} {1000 * r['p90']:8.0f}"
        )
    print("target: median < 150 ms at the default settings (issue 3)")


if __name__ == "__main__":
    main()
