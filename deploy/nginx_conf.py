"""The nginx configuration that puts N app processes behind one address.

Streamlit keeps a user's session (widget values, caches of that process) in the
one process that holds the user's WebSocket.  Every request of that browser —
the page, ``/_stcore/stream``, uploads to ``/_stcore/upload_file`` and files
under ``/media/`` — must therefore reach the same process.  Keying on the
client address (``ip_hash``) would send a whole classroom behind one NAT, or a
load test from one machine, to a single process, so affinity rides on a cookie
that nginx sets itself:

* a browser without the cookie goes to the next process in turn, skipping
  one that is still busy answering an earlier newcomer (``least_conn`` over
  first requests), so arrivals are shared out evenly; hashing a random id
  instead split 30 students 10/20 in a trial;
* the response sets ``kllab=<process number>`` (from ``$upstream_addr``);
* a browser with the cookie goes to that process, or to the next one if it
  is down (``backup``); an unknown value counts as no cookie.

Upload size is left to Streamlit (``server.maxUploadSize``, checked while the
body streams in): nginx passes bodies through unbuffered and unlimited, so the
limit is configured in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["BACKEND_HEADER", "COOKIE", "render", "streamlit_static_dir"]

#: The affinity cookie nginx sets (a random id; it carries no user data).
COOKIE = "kllab"
#: Response header naming the app process that answered (only with ``expose_backend``).
BACKEND_HEADER = "X-KL-Backend"
#: Streamlit's own Cache-Control for its hashed bundles (starlette_static_routes.py,
#: STATIC_ASSET_CACHE_MAX_AGE_SECONDS); tests/deploy checks the two agree.
STATIC_CACHE_CONTROL = "public, immutable, max-age=31536000"
#: Content types of the files in Streamlit's static folder (no dependency on /etc/nginx).
STATIC_TYPES = {
    "application/javascript": "js mjs",
    "text/css": "css",
    "font/woff2": "woff2",
    "font/woff": "woff",
    "font/ttf": "ttf",
    "image/png": "png",
    "image/gif": "gif",
    "image/svg+xml": "svg",
    "image/jpeg": "jpg jpeg",
    "application/json": "json map",
    "application/wasm": "wasm",
}


def streamlit_static_dir() -> Path | None:
    """Streamlit's hashed front-end bundles (``<package>/static/static``), if found.

    Found without importing streamlit.  The app serves this folder at
    ``/static/``; nginx can serve it instead (see :func:`render`).
    """
    import importlib.util

    spec = importlib.util.find_spec("streamlit")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "static" / "static"
    return folder if (folder / "js").is_dir() else None


def _proxy_headers(indent: str) -> str:
    lines = [
        "proxy_http_version 1.1;",
        # Streamlit compares the WebSocket's Origin with Host: keep the browser's Host.
        "proxy_set_header Host $http_host;",
        "proxy_set_header X-Real-IP $remote_addr;",
        "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
        "proxy_set_header X-Forwarded-Proto $scheme;",
    ]
    return "\n".join(indent + line for line in lines)


def render(
    backends: Sequence[tuple[str, int]],
    *,
    listen: tuple[str, int],
    prefix: Path | None = None,
    expose_backend: bool = False,
    base_path: str = "",
    static_dir: Path | None = None,
) -> str:
    """The text of ``nginx.conf`` for the given app processes.

    Parameters
    ----------
    backends : sequence of (host, port)
        The Streamlit processes, e.g. ``[("127.0.0.1", 8501), ("127.0.0.1", 8502)]``.
    listen : (host, port)
        Where nginx listens, e.g. ``("0.0.0.0", 8080)``.
    prefix : Path, optional
        A private directory for nginx's pid file and temporary files, so it runs
        without touching ``/etc/nginx`` or ``/var``.  Without it the output is an
        ``http``-level snippet (``map``, ``upstream``, ``server``) to include in
        an existing nginx configuration.
    expose_backend : bool
        Add a ``X-KL-Backend`` response header with the answering process's
        address (used by the benchmark and tests to check affinity).
    base_path : str
        Streamlit's ``server.baseUrlPath`` (without slashes) when the app is
        served under a sub-path; ``""`` for the root.
    static_dir : Path, optional
        Streamlit's bundle folder (:func:`streamlit_static_dir`): nginx then
        serves ``/static/`` itself, compressed, with Streamlit's cache header,
        so a class arriving at once does not keep the app processes busy with
        a hundred-odd script files per browser.  Without it they are proxied.

    Returns
    -------
    str
        The configuration text.
    """
    if not backends:
        raise ValueError("backends must name at least one (host, port)")
    for host, port in [*backends, listen]:
        if not host or not 0 < int(port) < 65536:
            raise ValueError(f"backends/listen: bad address {host!r}:{port!r}")
    base = "/" + base_path.strip("/") if base_path.strip("/") else ""
    addresses = [f"{host}:{port}" for host, port in backends]
    n = len(addresses)
    route_groups = "\n".join(
        f"    upstream kllab_{i} {{\n"
        f"        server {addresses[i]} max_fails=1 fail_timeout=5s;\n"
        + (f"        server {addresses[(i + 1) % n]} backup;\n" if n > 1 else "")
        + "        keepalive 16;\n    }"
        for i in range(n)
    )
    new_group = "\n".join(
        f"        server {a} max_fails=1 fail_timeout=5s;" for a in addresses
    )
    cookie_routes = "\n".join(f'        "{i}" kllab_{i};' for i in range(n))
    addr_routes = "\n".join(f'        "{a}" {i};' for i, a in enumerate(addresses))
    headers = _proxy_headers(" " * 12)
    static_block = ""
    if static_dir is not None:
        types = "\n".join(f"                {t} {ext};" for t, ext in STATIC_TYPES.items())
        static_block = f"""\
        # Streamlit's hashed bundles, straight from its package folder.
        location {base}/static/ {{
            alias "{Path(static_dir)}/";
            types {{
{types}
            }}
            default_type application/octet-stream;
            add_header Cache-Control "{STATIC_CACHE_CONTROL}" always;
            gzip on;
            gzip_types application/javascript text/css application/json image/svg+xml;
            gzip_vary on;
        }}

"""
    backend_header = (
        f"        add_header {BACKEND_HEADER} $upstream_addr always;\n" if expose_backend else ""
    )
    http_block = f"""\
    # Affinity: the {COOKIE} cookie names a process; without it, the next one in turn.
    map $cookie_{COOKIE} $kllab_upstream {{
{cookie_routes}
        default kllab_new;
    }}
    # The process that answered, as the cookie's value ("" if nginx had to try two).
    map $upstream_addr $kllab_route {{
{addr_routes}
        default "";
    }}
    map $kllab_upstream $kllab_set_cookie {{
        kllab_new "{COOKIE}=$kllab_route; Path=/; HttpOnly; SameSite=Lax";
        default   "";
    }}
    # Keep-alive to the app for plain requests, "upgrade" for the WebSocket.
    map $http_upgrade $kllab_connection {{
        default upgrade;
        ""      "";
    }}

    upstream kllab_new {{
        least_conn;
{new_group}
        keepalive 16;
    }}
{route_groups}

    server {{
        listen {listen[0]}:{listen[1]};
        server_name _;
        server_tokens off;
        # Sent only to a browser that came without a usable cookie (empty: no header).
        add_header Set-Cookie $kllab_set_cookie always;
{backend_header}        # Streamlit checks server.maxUploadSize itself while the upload streams in.
        client_max_body_size 0;

        location = {base}/_stcore/stream {{
            proxy_pass http://$kllab_upstream;
{headers}
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            # A student may leave a tab open through a whole lecture.
            proxy_read_timeout 1d;
            proxy_send_timeout 1d;
            proxy_buffering off;
        }}

{static_block}        location {base}/ {{
            proxy_pass http://$kllab_upstream;
{headers}
            proxy_set_header Connection $kllab_connection;
            proxy_request_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
"""
    if prefix is None:
        return "# KL Estimator Lab behind nginx: put this in the http { } block.\n" + http_block
    prefix = Path(prefix)
    temp_paths = "\n".join(
        f"    {name}_temp_path {prefix / name};"
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""\
# KL Estimator Lab: {len(backends)} app process(es) behind nginx, generated by deploy.serve.
worker_processes 1;
pid {prefix / "nginx.pid"};
error_log {prefix / "nginx-error.log"} warn;

events {{
    worker_connections 1024;
}}

http {{
    access_log off;
{temp_paths}

{http_block}}}
"""
