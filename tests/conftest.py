"""Shared test set-up: the app re-raises page errors under test (see ``app.py``)."""

import os

os.environ["KL_LAB_STRICT"] = "1"
