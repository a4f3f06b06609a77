"""The classroom deployment (``deploy.serve``) and its benchmark, for real.

A short benchmark run (3 students, 2 widget changes each) through nginx in
front of two app processes proves that the deployment starts, that
Streamlit's WebSocket protocol works through the proxy with cookie affinity,
and that the benchmark stops everything it started.  No timing is asserted.

The other tests use the session's ``classroom`` deployment (tests/conftest.py):
how nginx shares out new browsers and keeps each on its process, serves
Streamlit's bundles, and moves a browser whose process died (last: it kills one).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from deploy import nginx_conf, serve
from deploy import processes as procs
from deploy.serve import NginxMissing, find_nginx

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench_classroom.py"


def _request(url: str, *, cookie: str | None = None, method: str = "GET"):
    """(status, headers) of one request; HTTP errors are answers too."""
    req = urllib.request.Request(url, method=method, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()
            return resp.status, resp.headers
    except urllib.error.HTTPError as err:
        return err.code, err.headers


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_short_benchmark_through_nginx_runs_clean_and_stops_everything(nginx_path):
    cmd = [sys.executable, str(BENCH), "--processes", "2", "--sessions", "3", "--actions", "2",
           "--pause", "0.2", "--ramp", "0.5", "--no-warmup", "--json"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)

    assert report["setup"]["proxy"] == "nginx"
    assert report["errors"] == 0, report["error_examples"]
    assert report["runs_finished"] == report["runs_expected"] == 3 * (1 + 2)
    assert report["change"]["n"] == 6 and report["open"]["n"] == 3
    for session in report["sessions"]:
        # The page and its WebSocket were served by the same process.
        assert session["backends"]["page"] is not None
        assert session["backends"]["page"] == session["backends"]["stream"]
    # The client found URL-bound widgets to move (a page without one is rerun as is).
    assert any(session["key"] is not None for session in report["sessions"])
    assert report["cpu_per_run_s"] > 0 and report["rss_peak_sum_mb"] > 0

    started = report["pids"]["app"] + report["pids"]["nginx"]
    assert len(report["pids"]["app"]) == 2 and report["pids"]["nginx"]
    deadline = time.monotonic() + 15
    while any(_alive(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in started if _alive(p)], "the benchmark left processes running"


def _kllab_cookies(headers) -> list[str]:
    return [c.split(";")[0] for c in headers.get_all("Set-Cookie") or []
            if c.startswith(f"{nginx_conf.COOKIE}=")]


def test_new_browsers_spread_over_the_processes_and_each_keeps_its_own(classroom):
    header = nginx_conf.BACKEND_HEADER
    addresses = [f"127.0.0.1:{p}" for p in classroom.backend_ports]
    first_visits = [_request(f"{classroom.url}/_stcore/health") for _ in range(24)]
    assert all(status == 200 for status, _ in first_visits)
    answered = [h[header] for _, h in first_visits]
    assert all(answered.count(a) >= 8 for a in addresses)  # least_conn: the class is shared out
    for _, h in first_visits:  # each new browser is told which process it has
        assert _kllab_cookies(h) == [f"{nginx_conf.COOKIE}={addresses.index(h[header])}"]

    status, headers = _request(f"{classroom.url}/estimator-lab")
    assert status == 200
    (cookie,) = _kllab_cookies(headers)
    home = headers[header]
    # Every later request of that browser — page, health, uploads, media — reaches
    # the same process (upload and media answers are refusals here, but from it).
    for path, method in [("/", "GET"), ("/_stcore/health", "GET"), ("/_stcore/host-config", "GET"),
                         ("/_stcore/upload_file/s/f", "PUT"), ("/media/none.png", "GET")]:
        status, headers = _request(classroom.url + path, cookie=cookie, method=method)
        assert headers[header] == home, path
        assert _kllab_cookies(headers) == []


def test_nginx_answers_on_its_port_and_the_apps_on_theirs(classroom):
    # The deployment's ports are all different, and the check that nginx (not an app process
    # that took its port) answers tells the two apart.
    assert len({classroom.port, *classroom.backend_ports}) == 1 + len(classroom.backend_ports)
    assert procs.answered_by(f"{classroom.url}/_stcore/health", "nginx")
    for port in classroom.backend_ports:
        assert not procs.answered_by(f"http://127.0.0.1:{port}/_stcore/health", "nginx")


def test_an_unknown_cookie_is_replaced(classroom):
    status, headers = _request(f"{classroom.url}/_stcore/health",
                               cookie=f"{nginx_conf.COOKIE}=99")
    assert status == 200
    assert len(_kllab_cookies(headers)) == 1


def test_nginx_serves_streamlits_bundles_itself_with_streamlits_cache_header(classroom):
    from streamlit.web.server.starlette.starlette_server_config import (
        STATIC_ASSET_CACHE_MAX_AGE_SECONDS,
    )

    assert nginx_conf.STATIC_CACHE_CONTROL == (
        f"public, immutable, max-age={STATIC_ASSET_CACHE_MAX_AGE_SECONDS}"
    )
    with urllib.request.urlopen(f"{classroom.url}/", timeout=30) as resp:
        html = resp.read().decode()
    script = re.search(r'src="\./(static/js/[^"]+\.js)"', html).group(1)
    req = urllib.request.Request(f"{classroom.url}/{script}", headers={"Accept-Encoding": "gzip"})
    if serve._static_dir_for_nginx() is None:
        # nginx's workers (nobody) cannot enter this checkout, e.g. a clone in a 0700
        # temp dir: by design the app processes keep serving their bundles.
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert resp.status == 200 and nginx_conf.BACKEND_HEADER in resp.headers
        return
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = resp.read()
        assert resp.headers["Content-Type"] == "application/javascript"
        assert resp.headers["Cache-Control"] == nginx_conf.STATIC_CACHE_CONTROL
        assert resp.headers["Content-Encoding"] == "gzip"
        assert nginx_conf.BACKEND_HEADER not in resp.headers  # no app process involved
    on_disk = (nginx_conf.streamlit_static_dir() / script.removeprefix("static/")).read_bytes()
    assert gzip.decompress(body) == on_disk


def test_nginx_accepts_the_generated_configuration(nginx_path, tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    conf = full / "nginx.conf"
    conf.write_text(nginx_conf.render([("127.0.0.1", 8501), ("127.0.0.1", 8502)],
                                      listen=("127.0.0.1", 8080), prefix=full, base_path="lab",
                                      static_dir=nginx_conf.streamlit_static_dir()))
    checked = subprocess.run([nginx_path, "-t", "-p", str(full), "-c", str(conf)],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr

    # The --print-config snippet, inside an existing nginx's http block.
    snippet = nginx_conf.render([("127.0.0.1", 8501)], listen=("0.0.0.0", 80))
    conf = tmp_path / "with-snippet.conf"
    conf.write_text(f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
                    f"events {{}}\nhttp {{\n{snippet}\n}}\n")
    checked = subprocess.run([nginx_path, "-t", "-p", str(tmp_path), "-c", str(conf)],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr


def test_bad_configuration_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="backends"):
        nginx_conf.render([], listen=("127.0.0.1", 8080))
    with pytest.raises(ValueError, match="backends/listen"):
        nginx_conf.render([("127.0.0.1", 70000)], listen=("127.0.0.1", 8080))


def test_serve_names_the_install_command_when_nginx_is_missing(tmp_path):
    with pytest.raises(NginxMissing, match="apt-get install -y nginx"):
        find_nginx(search_path=str(tmp_path))


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--processes", "0"], "--processes must be at least 1"),
     (["--port", "70000"], "--port must be in 1..65535")],
)
def test_serve_refuses_bad_arguments_clearly(args, message):
    done = subprocess.run([sys.executable, "-m", "deploy.serve", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr


def test_a_browser_whose_process_died_is_served_by_another_until_it_is_back(classroom):
    """Runs last in this file: it kills process 1 and lets the deployment restart it."""
    cookie = f"{nginx_conf.COOKIE}=1"
    classroom.apps[1].kill()
    classroom.apps[1].wait(timeout=10)
    status, headers = _request(f"{classroom.url}/_stcore/health", cookie=cookie)
    assert status == 200
    # $upstream_addr lists every process nginx tried: the dead one, then its backup.
    assert headers[nginx_conf.BACKEND_HEADER].split(", ")[-1] == f"127.0.0.1:{classroom.backend_ports[0]}"
    assert "restarted" in classroom.supervise()
    # nginx retries a failed process after fail_timeout (5 s); then the cookie leads home.
    home = f"127.0.0.1:{classroom.backend_ports[1]}"
    deadline = time.monotonic() + 20
    while True:
        status, headers = _request(f"{classroom.url}/_stcore/health", cookie=cookie)
        assert status == 200
        if headers[nginx_conf.BACKEND_HEADER] == home or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert headers[nginx_conf.BACKEND_HEADER] == home
