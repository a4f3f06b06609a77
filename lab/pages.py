"""The app's pages: one registry for the menu (``app.py``) and the links (Home).

Titles and URL paths are fixed: links shared by users point at them.  Titles
and blurbs are English source strings, marked with ``N_`` and translated where
shown (``_(page.title)``); URL paths are the same in every language.
Page files live in ``pages/`` and are named after their URL path
(``pages/estimator-lab.py`` is ``/estimator-lab``; Home, served at ``/``, is
``pages/home.py``): Streamlit's legacy ``pages/`` mode then finds every page
by its URL (see :mod:`lab.navigation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from i18n import N_

__all__ = ["PAGES", "PageInfo", "page_by_url"]


@dataclass(frozen=True)
class PageInfo:
    """One page of the app.

    Attributes
    ----------
    path : str
        The page file, relative to ``app.py``.
    title : str
        Menu and browser-tab title (English; show it as ``_(title)``).
    url_path : str
        The deep link ``/<url_path>``; the default page (Home) is served at ``/``.
    icon : str
        A Material icon.
    blurb : str
        One sentence for the links on Home (English; show it as ``_(blurb)``).
    """

    path: str
    title: str
    url_path: str
    icon: str
    blurb: str

    @property
    def stem(self) -> str:
        """The file's stem, the path Streamlit's legacy ``pages/`` mode serves it at."""
        return PurePosixPath(self.path).stem


PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "pages/home.py",
        N_("Home"),
        "",
        ":material/home:",
        N_("The question, the three estimators, and the five questions to ask of any KL number."),
    ),
    PageInfo(
        "pages/lessons.py",
        N_("Lessons"),
        "lessons",
        ":material/school:",
        N_("Seven short lessons: predict a number, check it against the exact value, explore the setting."),
    ),
    PageInfo(
        "pages/estimator-lab.py",
        N_("Estimator Lab"),
        "estimator-lab",
        ":material/science:",
        N_("Choose q, p, N, R, the seed and λ; watch bias, spread and negative values live."),
    ),
    PageInfo(
        "pages/control-variates.py",
        N_("Control variates"),
        "control-variates",
        ":material/tune:",
        N_("kλ = −log r + λ(r − 1): the variance against λ, and why only λ = 1 stays ≥ 0 for every q and p."),
    ),
    PageInfo(
        "pages/bregman-gap.py",
        N_("Bregman gap"),
        "bregman-gap",
        ":material/show_chart:",
        N_("k3 as the gap between log r and its tangent r − 1, sample by sample."),
    ),
    PageInfo(
        "pages/f-divergences.py",
        N_("f-divergences & Fisher"),
        "f-divergences",
        ":material/functions:",
        N_("Why k2 tracks KL near p = q: every smooth f-divergence is ½ f″(1) F θ² there."),
    ),
    PageInfo(
        "pages/gradients.py",
        N_("Gradients"),
        "gradients",
        ":material/trending_down:",
        N_("Value ≠ gradient: what k1, k2, k3 and each library's KL loss actually differentiate to."),
    ),
    PageInfo(
        "pages/sequences.py",
        N_("Tokens & sequences"),
        "sequences",
        ":material/linear_scale:",
        N_(
            "KL between whole sequences: six estimators against T, β per token against per "
            "sequence, and which per-token losses have the right gradient."
        ),
    ),
    PageInfo(
        "pages/approx-kl.py",
        N_("approx_kl in practice"),
        "approx-kl",
        ":material/monitoring:",
        N_(
            "What PPO, GRPO and RLHF libraries actually compute under the name approx_kl, and how "
            "their clamps bias it."
        ),
    ),
    PageInfo(
        "pages/audit.py",
        N_("Audit your log-probs"),
        "audit",
        ":material/fact_check:",
        N_("Upload per-token log-probs: k1, k2, k3 with standard errors, by position and sequence."),
    ),
    PageInfo(
        "pages/config-doctor.py",
        N_("Config doctor"),
        "config-doctor",
        ":material/stethoscope:",
        N_(
            "Paste a verl, OpenRLHF or TRL config: what its KL term estimates, where its gradient "
            "pushes, and what to change."
        ),
    ),
)


def page_by_url(url_path: str) -> PageInfo:
    """The page served at ``/<url_path>`` (``""`` for Home)."""
    for page in PAGES:
        if page.url_path == url_path:
            return page
    raise ValueError(f"no page at /{url_path}; pages: {[p.url_path for p in PAGES]}")
