"""lab.pages: the page registry that the menu, the links and the navigation share."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.pages import PAGES, page_by_url

ROOT = Path(__file__).resolve().parents[2]
#: URLs users have shared: they must keep working.
SHARED = ("", "estimator-lab", "control-variates", "bregman-gap", "f-divergences", "approx-kl")


def test_every_shared_url_is_still_a_page_and_audit_is_new():
    urls = [p.url_path for p in PAGES]
    assert [u for u in urls if u in SHARED] == list(SHARED)  # in their order; new pages may sit between
    assert {"audit", "sequences", "config-doctor", "gradients"} <= set(urls)
    assert len(set(urls)) == len(urls)


@pytest.mark.parametrize("info", PAGES, ids=[p.stem for p in PAGES])
def test_each_file_lives_in_pages_and_is_named_after_its_url(info):
    # Streamlit's legacy pages/ mode addresses a file by its stem: naming the file after
    # its URL lets that mode find every page on a fresh server (lab/navigation.py).
    assert (ROOT / info.path).is_file() and info.path.startswith("pages/")
    assert info.stem == (info.url_path or "home")
    assert page_by_url(info.url_path) is info


def test_no_other_script_in_pages():
    assert sorted(p.name for p in (ROOT / "pages").glob("*.py")) == sorted(Path(p.path).name for p in PAGES)


def test_unknown_pages_are_refused():
    with pytest.raises(ValueError, match="no page"):
        page_by_url("nope")
