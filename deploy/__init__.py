"""Serving the lab to a class: N app processes behind nginx (``python -m deploy.serve``).

* :mod:`deploy.nginx_conf` — the nginx configuration (WebSocket upgrade, cookie affinity);
* :mod:`deploy.processes` — start, watch and stop child processes;
* :mod:`deploy.serve` — the command and :class:`deploy.serve.Deployment`.

Nothing here imports streamlit: the app processes are ``streamlit run app.py``.
"""
