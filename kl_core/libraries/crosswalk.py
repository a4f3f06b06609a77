r"""Library crosswalk: how each RL library's KL option maps onto Schulman's estimators.

Every row of :data:`CROSSWALK` records, as data, what one library computes when a
user sets one KL option (or reads one KL value in a log): the exact code it runs,
which log-prob it subtracts from which, the clamps it applies, where the value
goes (reward, loss or a logged metric), which of the estimators in
:mod:`kl_core.estimation.estimators` it is, the settings that select it, and what gradient
it produces.  The rows live in ``kl_core/libraries/crosswalk.toml``.  This
module is the crosswalk's public face; the work is done in modules named for it:

* :mod:`kl_core.libraries.schema`: the record types and their checks;
* :mod:`kl_core.libraries.snippets`: the data file's ``@{name}`` snippets and prose messages;
* :mod:`kl_core.libraries.loading`: reading the TOML (:func:`load_crosswalk`);
* :mod:`kl_core.libraries.registry`: the loaded data and the one table of library names;
* :mod:`kl_core.libraries.lookups`: a library's options, one option, its releases;
* :mod:`kl_core.libraries.evaluation`: the per-token value (:func:`evaluate`);
* :mod:`kl_core.libraries.babel_extractor`: the prose fields for the translation catalog.

Conventions
-----------
Two roles name the log-probabilities of the **sampled** tokens:

``logp_sampler``
    log-prob under the policy that generated the samples (``q`` in the core).
``logp_other``
    log-prob under the other policy (``p`` in the core).

Then ``logr = logp_other - logp_sampler`` and, for ``x ~ sampler``,
``E[k1] = E[k3] = KL[sampler‖other]`` and ``E[k3_pq] = KL[other‖sampler]``.
A third role, ``current``, appears where the samples come from ``π_old`` but
the value is about ``π_θ``: TRL's ``use_bias_correction_kl`` (the value is
importance-weighted) and OpenRLHF's ``unbiased_gradient`` (only the gradient
is).  There the log-ratio is ``logp_other - logp_current``.

:func:`evaluate` reproduces the per-token value a library produces (before the
library averages it over tokens): clamp ``logr``, call the estimator from
:mod:`kl_core.estimation.estimators` (the single implementation of every formula), clamp
the value, and apply the importance weight where the library does.

Gradients
---------
Each entry also records how its gradient is formed (:attr:`CrosswalkEntry.grad_mode`)
and what that gradient is on average (:attr:`CrosswalkEntry.grad_target`, one of
:data:`GRADIENT_TARGETS`): a per-token value in a loss is differentiated with
the samples held fixed, as autograd does; a value in the reward is detached and
enters through the score function :math:`\mathrm{sg}(k)\,\nabla\log\pi_\theta`.
:mod:`kl_core.gradients.expected` computes these expected gradients exactly and the tests
check every recorded claim against it.

Releases
--------
Entries for verl, OpenRLHF and TRL were read in the releases on PyPI listed in
:data:`RELEASES` (the wheel, its sha256, and the release's defaults for the
settings that select an entry); ``release`` on an entry names the version, and
``legacy`` marks code the current release no longer ships (``release`` is then
the last release that had it).  ``verified_in`` says which files were read.

Sources: estimator definitions, J. Schulman, "Approximating KL Divergence"
(2020), http://joschu.net/blog/kl-approx.html.  Gradient caveats: Y. Tang and
R. Munos, "On a few pitfalls in KL divergence gradient estimation for RL",
arXiv:2506.09477.
"""


from __future__ import annotations

from kl_core.estimation import estimators  # noqa: F401 - the estimators evaluate() calls (tests patch it here)
from kl_core.libraries.babel_extractor import extract_messages
from kl_core.libraries.evaluation import evaluate
from kl_core.libraries.loading import CROSSWALK_FILE, PROSE_FIELDS, load_crosswalk
from kl_core.libraries.lookups import lookup, options, releases
from kl_core.libraries.registry import CROSSWALK, LIBRARIES, RELEASES, canonical_library, libraries
from kl_core.libraries.schema import (
    ACTS_ON,
    EXPECTED_GRADIENTS,
    GRAD_MODES,
    GRADIENT_TARGETS,
    ROLES,
    ConfigDefault,
    CrosswalkData,
    CrosswalkEntry,
    Library,
    Release,
)
from kl_core.libraries.snippets import marked_message, prose

__all__ = [
    "ACTS_ON", "CROSSWALK", "CROSSWALK_FILE", "EXPECTED_GRADIENTS", "GRADIENT_TARGETS", "GRAD_MODES", "LIBRARIES",
    "PROSE_FIELDS", "RELEASES", "ROLES", "ConfigDefault", "CrosswalkData", "CrosswalkEntry",
    "Library", "Release", "canonical_library", "evaluate", "extract_messages", "libraries",
    "load_crosswalk", "lookup", "marked_message", "options", "prose", "releases",
]
