# KL Estimator Lab in a container, built from uv.lock (runtime dependencies only).
#
#   docker build -t kl-lab .                           # one app process
#   docker run --rm -p 8501:8501 kl-lab                # → http://localhost:8501
#
#   docker build --target classroom -t kl-lab-class .  # N processes behind nginx
#   docker run --rm -p 8080:8080 kl-lab-class          # → http://<this machine>:8080
#   docker run --rm -p 8080:8080 kl-lab-class python -m deploy.serve --processes 4 --port 8080
#
# See README.md, "Serving a class".

FROM python:3.11-slim AS app

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_NO_CACHE=1 \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv \
    PATH="/app/.venv/bin:$PATH"

# uv from PyPI, the version the project uses (uv --version); the app runs as "lab".
# A font with Chinese glyphs, for the charts' PNG/SVG exports in ?lang=zh (vl-convert
# renders server-side with the system's fonts; browsers bring their own).
RUN pip install --no-cache-dir uv==0.13.9 \
    && apt-get update \
    && apt-get install -y --no-install-recommends fonts-wqy-microhei \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 lab

WORKDIR /app
# Dependencies first, so editing the app does not reinstall them.  The files
# stay root's: the app only reads them (Streamlit writes under /home/lab).
COPY pyproject.toml uv.lock ./
RUN uv sync --locked --no-dev --no-install-project
# The app itself; .dockerignore leaves out tests, benchmarks and local environments.
COPY . .

USER lab
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status != 200)"]
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", \
     "--server.headless=true", "--server.fileWatcherType=none", "--browser.gatherUsageStats=false"]


# The classroom deployment: python -m deploy.serve starts one app process per
# CPU the container may use (override with --processes), and nginx in front.
FROM app AS classroom

USER root
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*
USER lab

EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8080/_stcore/health', timeout=4).status != 200)"]
CMD ["python", "-m", "deploy.serve", "--port", "8080", "--address", "0.0.0.0"]
