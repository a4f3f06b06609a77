"""A browser's side of Streamlit's protocol, for load tests (Streamlit 1.67).

What the JS client does, and this one copies (read from the installed
package: ``web/server/starlette/starlette_websocket.py``, ``runtime/app_session.py``
and the frontend bundle's ``sendRerunBackMsg``/``getSessionTokens``):

1. ``GET /<page>?<query>`` (the HTML; nginx's affinity cookie arrives here),
   then ``GET /_stcore/health`` (sets the ``_streamlit_xsrf`` cookie) and
   ``GET /_stcore/host-config``; every request carries the cookies so far.
2. Open the WebSocket ``/_stcore/stream`` with subprotocols
   ``["streamlit", <xsrf cookie>]``, the cookies and an ``Origin`` header.
3. Send ``BackMsg.rerun_script`` with the page's query string, ``page_name`` =
   the URL path and an empty ``page_script_hash`` (the server resolves the
   page).  The server streams ``ForwardMsg``s: ``new_session``,
   ``navigation`` (whose ``page_script_hash`` is the page now shown),
   ``delta``s with the elements, and ``script_finished`` at the end.
4. A widget change is what the browser sends when a student moves a slider:
   ``rerun_script`` with ``page_script_hash`` = the current page, the
   widget's new state in ``widget_states`` and the URL's query string with
   the widget's ``?key=`` updated (widgets bound to the URL carry their key
   in ``query_param_key``).  Widgets not sent keep their values on the server.

   (A rerun that only carries a new query string does not change a bound
   widget in 1.67: the server keeps, or resets, the widget and rewrites the
   URL, so it is not a widget change.)

A run counts as an error when it does not finish within the timeout, ends
with a compile error, lands on another page, or shows an exception element
or an ``st.error`` box (``app.py`` turns page errors into ``st.error`` for
users, so that is where a failure shows).
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import math
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import ClientConnection, connect

__all__ = ["ProtocolError", "Run", "StreamlitSession", "Widget", "next_value"]

#: Widget element types whose value this client knows how to send.
CHANGEABLE = ("slider", "number_input")


class ProtocolError(RuntimeError):
    """The server answered something a browser would not accept."""


@dataclass
class Widget:
    """A URL-bound numeric widget seen in a run, and the value the client holds."""

    id: str
    kind: str  # "slider" or "number_input"
    key: str
    value: list[float] | float
    initial: list[float] | float
    lo: float | None
    hi: float | None
    step: float
    is_int: bool
    #: A select slider's option labels: the value is then their indices, and the
    #: labels are what goes over the wire (``string_array_value``) and into the URL.
    options: list[str] | None = None


@dataclass
class Run:
    """One script run: from sending the rerun to ``script_finished``."""

    kind: str  # "open" or "change"
    page: str
    seconds: float | None
    error: str | None = None
    messages: int = 0
    key: str | None = None


def _step_away(start: float, lo: float | None, hi: float | None, step: float, t: int) -> float:
    """The ``t``-th value (t ≥ 1) of ``start`` + 1, 2, … steps up to ``hi``, then 1, 2, … down to ``lo``.

    Cycles when ``t`` exceeds the values in range; never returns ``start``
    unless the range holds no other value.  No ``hi``: always up.
    """
    if hi is None:
        return start + t * step
    up = int(math.floor((hi - start) / step + 1e-9))
    down = int(math.floor((start - lo) / step + 1e-9)) if lo is not None else 0
    if up + down < 1:
        return start
    k = (t - 1) % (up + down)
    return start + (k + 1) * step if k < up else start - (k - up + 1) * step


def next_value(widget: Widget, t: int) -> list[float] | float:
    """The ``t``-th (t ≥ 1) of a sequence of distinct values for ``widget``.

    Steps from the value the widget was first shown with, on its own grid
    (step, min, max, as the page set them): t = 1, 2, … go up one, two, …
    steps, then down, so sessions given different ``t`` ask for different
    values.  A range slider moves its upper end (staying above the lower one).
    """
    if t < 1:
        raise ValueError(f"t must be at least 1, got {t}")
    step = widget.step or 1.0

    def tidy(x: float) -> float:
        return float(int(round(x))) if widget.is_int else round(x, 10)

    if widget.kind == "slider":
        values = list(widget.initial)
        if len(values) == 2:
            values[1] = tidy(_step_away(values[1], values[0] + step, widget.hi, step, t))
        else:
            values[0] = tidy(_step_away(values[0], widget.lo, widget.hi, step, t))
        return values
    return tidy(_step_away(float(widget.initial), widget.lo, widget.hi, step, t))


def _url_text(x: float, is_int: bool) -> str:
    return str(int(x)) if is_int else repr(float(x))


class StreamlitSession:
    """One simulated browser tab: cookies, a WebSocket, the page it shows.

    Parameters
    ----------
    base_url : str
        ``http://host:port`` of the app (or of nginx in front of it).
    run_timeout : float
        Seconds a run may take before it counts as a timeout error.
    backend_header : str, optional
        A response header naming the process that answered (nginx's
        ``X-KL-Backend`` from ``deploy.nginx_conf``): recorded for the page
        GET and the WebSocket handshake, so affinity can be checked.
    """

    def __init__(self, base_url: str, *, run_timeout: float = 60.0,
                 backend_header: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.run_timeout = run_timeout
        self.backend_header = backend_header
        self.jar = http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.ws: ClientConnection | None = None
        self.url_path = ""
        self.query = ""
        self.page_hash = ""
        #: URL path of the page the server actually ran last (from ``navigation``).
        self.page_shown = ""
        self.widgets: dict[str, Widget] = {}
        self.backends: dict[str, str | None] = {}

    # -- HTTP -------------------------------------------------------------------------
    def _get(self, path: str) -> dict[str, str]:
        with self._opener.open(f"{self.base_url}{path}", timeout=self.run_timeout) as resp:
            resp.read()
            if resp.status != 200:
                raise ProtocolError(f"GET {path}: HTTP {resp.status}")
            return dict(resp.headers)

    def _cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)

    def _cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    async def connect(self, url_path: str, query: str) -> None:
        """Load ``/<url_path>?<query>`` as a browser does, and open the WebSocket."""
        self.url_path, self.query = url_path, query
        page = f"/{url_path}" + (f"?{query}" if query else "")
        headers = await asyncio.to_thread(self._get, page)
        if self.backend_header:
            self.backends["page"] = headers.get(self.backend_header)
        await asyncio.to_thread(self._get, "/_stcore/health")
        await asyncio.to_thread(self._get, "/_stcore/host-config")
        token = self._cookie("_streamlit_xsrf") or "PLACEHOLDER_AUTH_TOKEN"
        ws_url = "ws" + self.base_url[len("http"):] + "/_stcore/stream"
        self.ws = await connect(
            ws_url,
            subprotocols=["streamlit", token],
            additional_headers={"Cookie": self._cookie_header(), "Origin": self.base_url},
            max_size=None,
            open_timeout=self.run_timeout,
            ping_interval=None,  # a browser answers pings but sends none
        )
        if self.ws.subprotocol != "streamlit":
            raise ProtocolError(f"server chose subprotocol {self.ws.subprotocol!r}")
        if self.backend_header:
            self.backends["stream"] = self.ws.response.headers.get(self.backend_header)

    async def close(self) -> None:
        """Close the WebSocket (the server then ends the session)."""
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    # -- runs ---------------------------------------------------------------------------
    async def open_page(self) -> Run:
        """The first run, as sent on connect: query string and the page's URL path."""
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_name = self.url_path
        msg.rerun_script.context_info.timezone = "UTC"
        msg.rerun_script.context_info.url = f"{self.base_url}/{self.url_path}"
        run = await self._run(msg, "open")
        if run.error is None and self.page_shown != self.url_path:
            run.error = f"landed on /{self.page_shown} instead of /{self.url_path}"
        return run

    async def change(self, key: str, value: list[float] | float) -> Run:
        """Move the widget bound to ``?key=`` to ``value``, as a student's drag does."""
        widget = self.widgets.get(key)
        if widget is None:
            raise KeyError(f"no changeable widget with URL key {key!r} on /{self.url_path}")
        msg = BackMsg()
        rerun = msg.rerun_script
        rerun.page_script_hash = self.page_hash
        state = rerun.widget_states.widgets.add()
        state.id = widget.id
        if widget.options:
            texts = [widget.options[int(v)] for v in value]
            state.string_array_value.data.extend(texts)
        elif widget.kind == "slider":
            state.double_array_value.data.extend(float(v) for v in value)
            texts = [_url_text(v, widget.is_int) for v in value]
        elif widget.is_int:
            state.int_value = int(value)
            texts = [_url_text(value, True)]
        else:
            state.double_value = float(value)
            texts = [_url_text(value, False)]
        pairs = [(k, v) for k, v in urllib.parse.parse_qsl(self.query) if k != key]
        self.query = urllib.parse.urlencode(pairs + [(key, t) for t in texts])
        rerun.query_string = self.query
        widget.value = value
        run = await self._run(msg, "change")
        run.key = key
        return run

    async def rerun(self) -> Run:
        """Run the page again with nothing changed (the "Rerun" menu item, key "R")."""
        msg = BackMsg()
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.query_string = self.query
        return await self._run(msg, "change")

    async def _run(self, msg: BackMsg, kind: str) -> Run:
        if self.ws is None:
            raise ProtocolError("not connected")
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        deadline = loop.time() + self.run_timeout
        await self.ws.send(msg.SerializeToString())
        errors: list[str] = []
        count = 0
        pages: dict[str, str] = {}
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return Run(kind, self.url_path, None, "timeout", count)
            try:
                data = await asyncio.wait_for(self.ws.recv(), remaining)
            except TimeoutError:
                return Run(kind, self.url_path, None, "timeout", count)
            if isinstance(data, str):
                raise ProtocolError("text frame on the stream (Streamlit sends binary protobuf)")
            fwd = ForwardMsg.FromString(data)
            count += 1
            what = fwd.WhichOneof("type")
            if what == "new_session":
                self.page_hash = fwd.new_session.page_script_hash or self.page_hash
            elif what == "navigation":
                self.page_hash = fwd.navigation.page_script_hash
                pages = {p.page_script_hash: p.url_pathname for p in fwd.navigation.app_pages}
            elif what == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._element(fwd.delta.new_element, errors)
            elif what == "session_event" and fwd.session_event.HasField(
                "script_compilation_exception"
            ):
                errors.append("compile error")
            elif what == "page_not_found":
                errors.append(f"page not found: {fwd.page_not_found.page_name!r}")
            elif what == "script_finished":
                seconds = time.perf_counter() - t0
                if fwd.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    errors.append("compile error")
                self.page_shown = pages.get(self.page_hash, self.page_shown)
                return Run(kind, self.url_path, seconds, "; ".join(errors) or None, count)

    def _element(self, element, errors: list[str]) -> None:
        what = element.WhichOneof("type")
        if what == "exception":
            errors.append(f"exception: {element.exception.type}: {element.exception.message[:120]}")
            return
        if what == "alert" and element.alert.format == Alert.ERROR:
            errors.append(f"st.error: {element.alert.body[:120]}")
            return
        if what not in CHANGEABLE:
            return
        w = getattr(element, what)
        if not w.HasField("query_param_key") or w.disabled:
            return
        key = w.query_param_key
        known = self.widgets.get(key)
        if known is not None and known.id == w.id:
            return  # the client's own value stands (the server echoes only its changes)
        if what == "slider":
            value = list(w.value) if w.set_value else [w.default[i] for i in range(len(w.default))]
            self.widgets[key] = Widget(w.id, what, key, value, list(value), w.min, w.max,
                                       w.step, w.data_type == w.INT, list(w.options) or None)
        else:
            default = w.default if w.HasField("default") else (w.min if w.has_min else 0.0)
            value = w.value if w.set_value else default
            self.widgets[key] = Widget(
                w.id, what, key, value, value, w.min if w.has_min else None,
                w.max if w.has_max else None, w.step, w.data_type == w.INT,
            )


@dataclass
class SessionLog:
    """What one simulated student did and saw."""

    index: int
    page: str
    key: str | None = None
    runs: list[Run] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    backends: dict[str, str | None] = field(default_factory=dict)
