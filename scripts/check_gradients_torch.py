"""Cross-check kl_core.gradients.expected against torch autograd through the libraries' own KL functions.

Not part of the test suite (torch is not a dependency of the app).  Run it in a
separate environment that has torch, numpy and scipy, with the libraries'
wheels unpacked somewhere, e.g.::

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 scipy
    pip download --no-deps verl==0.9.1 openrlhf==0.11.2 -d /tmp/wheels
    /tmp/torchenv/bin/python scripts/check_gradients_torch.py --wheels /tmp/wheels

For every option of :func:`kl_core.gradients.expected.gradient_table` (and every reward
entry of the crosswalk) it builds the loss autograd sees on a categorical
policy, Σ_x s(x)·loss(x), with the tokens x weighted by the sampler s and the
log-probabilities of all K tokens as one batch, lets torch differentiate it in
float64, and prints the largest difference from
:func:`kl_core.gradients.expected.expected_gradient`, per row and per setting
(on-policy; off-policy with π_old; large log-ratios where the clamps bite).

Where the loss comes from:

* verl 0.9.1: ``verl.trainer.ppo.core_algos.kl_penalty``, imported from the
  wheel (its heavy imports — omegaconf, verl.utils, the config classes — are
  stubbed; ``kl_penalty`` itself needs only torch).  verl's distillation loss
  calls the same function with (student, teacher); that call is not imported.
* OpenRLHF 0.11.2: ``openrlhf.models.utils.compute_approx_kl``, imported from
  the wheel (``deepspeed`` stubbed), with ``log_probs_old`` and
  ``unbiased_gradient`` as the trainer passes them.
* TRL 1.16.0: the KL lines of ``GRPOTrainer._compute_loss`` and of RLOO's
  reward live inside trainer methods that cannot be called on their own; they
  are transcribed here from the wheel, token for token (say so in the output).
* A value in the reward enters through the PPO ratio, Σ_x s(x)·(π_θ/s)(x)·sg(value(x)),
  the value computed from the rollout policy's log-probs (verl, OpenRLHF, TRL)
  or the current ones (verl distillation with use_policy_gradient).
* The basic options (k1, k2, k3, k3_pq, k1_score, k_lambda) are their formulas
  from the blog, written in torch.

Exit code 1 if a row disagrees by more than 1e-10 relative (1e-6 for OpenRLHF,
whose ``compute_approx_kl`` computes in float32: it calls ``.float()`` on its inputs).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import types
import zipfile
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kl_core.estimation.estimators import ESTIMATORS  # noqa: E402
from kl_core.gradients.expected import BASIC_OPTIONS, entry_name, expected_gradient, loss_entries  # noqa: E402
from kl_core.libraries import crosswalk as cw  # noqa: E402

TOL = 1e-10
LAM = 0.37  # λ of k_lambda in every setting
# OpenRLHF casts its log-probs with .float(): its gradients carry float32 rounding.
TOL_FLOAT32 = 1e-6


# --------------------------------------------------------------------------- #
# The releases' own functions
# --------------------------------------------------------------------------- #
def _unpack(wheels: Path, pattern: str, dest: Path) -> Path:
    found = sorted(wheels.glob(pattern))
    if not found:
        raise SystemExit(f"no wheel matching {pattern} in {wheels}")
    out = dest / found[0].stem
    with zipfile.ZipFile(found[0]) as z:
        z.extractall(out)
    return out


def _stub(name: str, **attrs: object) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def verl_kl_penalty(root: Path):
    """verl.trainer.ppo.core_algos.kl_penalty from the wheel, its heavy imports stubbed."""

    class _Cfg:  # stands for DictConfig / AlgoConfig / ActorConfig in type hints
        pass

    _stub("omegaconf", DictConfig=_Cfg)
    for pkg in ("verl", "verl.trainer", "verl.trainer.ppo", "verl.workers"):
        _stub(pkg, __path__=[])
    _stub("verl.utils", as_torch_index=None, group_mean_std=None, __path__=[])
    _stub("verl.utils.torch_functional")
    _stub("verl.utils.import_utils", deprecated=lambda *a, **k: (lambda f: f))
    _stub("verl.trainer.config", AlgoConfig=_Cfg)
    _stub("verl.workers.config", ActorConfig=_Cfg)
    mod = _load("verl.trainer.ppo.core_algos", root / "verl" / "trainer" / "ppo" / "core_algos.py")
    return mod.kl_penalty


def openrlhf_compute_approx_kl(root: Path):
    """openrlhf.models.utils.compute_approx_kl from the wheel, deepspeed stubbed."""
    _stub("deepspeed", utils=types.SimpleNamespace(set_z3_leaf_modules=None))
    path = next(root.rglob("openrlhf/models/utils.py"))
    return _load("openrlhf_models_utils", path).compute_approx_kl


# TRL 1.16.0, trl/trainer/grpo_trainer.py, GRPOTrainer._compute_loss (transcribed):
#     old_per_token_logps = per_token_logps.detach() if old_per_token_logps is None else ...
#     log_ratio = per_token_logps - old_per_token_logps
#     coef_1 = torch.exp(log_importance_weights)          # token level: = log_ratio
#     per_token_kl = torch.exp(ref - per_token_logps) - (ref - per_token_logps) - 1
#     if self.args.use_bias_correction_kl: per_token_kl = per_token_kl * coef_1
def trl_grpo_kl(per_token_logps, ref_per_token_logps, old_per_token_logps, bias_correction: bool):
    old = per_token_logps.detach() if old_per_token_logps is None else old_per_token_logps
    coef_1 = torch.exp(per_token_logps - old)
    per_token_kl = (
        torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1
    )
    return per_token_kl * coef_1 if bias_correction else per_token_kl


# --------------------------------------------------------------------------- #
# Losses, one per row
# --------------------------------------------------------------------------- #
# Per-token value of each estimator of kl_core.estimation.estimators as a loss, t = log r.
_TORCH_ESTIMATORS = {
    "k1": lambda t, lam: -t,
    "k2": lambda t, lam: 0.5 * t**2,
    "k3": lambda t, lam: torch.expm1(t) - t,
    "k3_pq": lambda t, lam: t * torch.exp(t) - torch.expm1(t),
    "k_lambda": lambda t, lam: -t + lam * torch.expm1(t),
}


def basic_loss(key: str, lp, lr, lam: float):
    """Per-token loss of a basic option (tokens drawn by the sampler)."""
    t = lr - lp
    if key == "k1_score":
        return (-t).detach() * lp
    if key not in _TORCH_ESTIMATORS:
        raise ValueError(key)
    k = _TORCH_ESTIMATORS[key](t, lam)
    if ESTIMATORS[key].parameter is not None:  # score-function form: sg(k)·log π + k
        return k.detach() * lp + k
    return k


_VERL_DISTILL = {"distillation/k3": "k3", "distillation/k2": "k2", "distillation/k1": "k1"}


def entry_loss(e: cw.CrosswalkEntry, lp, lr, ls, fns: dict):
    """Per-token loss autograd sees for a crosswalk entry; ``ls`` are the sampler's log-probs."""
    if e.acts_on == "reward":
        ratio = torch.exp(lp - ls.detach())  # the PPO ratio π_θ/π_old; its gradient is ratio·∇log π_θ
        base = ls if e.grad_mode == "score" else lp.detach()
        return ratio * reward_value(e, base.detach(), lr, fns).detach()
    if e.library == "verl":
        mode = _VERL_DISTILL.get(e.option, e.option)
        return fns["verl"](logprob=lp, ref_logprob=lr, kl_penalty=mode)
    if e.library == "OpenRLHF":
        est = e.option.split("+")[0]
        return fns["openrlhf"](lp, lr, log_probs_old=ls, kl_estimator=est, unbiased_gradient=e.grad_mode == "k2_is")
    if e.library == "TRL":
        old = None if torch.equal(ls, lp.detach()) else ls
        return trl_grpo_kl(lp, lr, old, bias_correction=e.importance_weighted)
    raise ValueError(f"no loss for {e.library} {e.option}")


def reward_value(e: cw.CrosswalkEntry, lp, lr, fns: dict):
    """The detached per-token value a library puts in the reward."""
    if e.estimator == "full":
        return torch.full_like(lp, float(torch.sum(torch.exp(lp) * (lp - lr))))
    if e.library == "verl":
        return fns["verl"](logprob=lp, ref_logprob=lr, kl_penalty=_VERL_DISTILL.get(e.option, e.option))
    if e.library == "OpenRLHF":
        return fns["openrlhf"](lp, lr, kl_estimator=e.option)
    # TRL legacy PPOTrainer._kl_penalty / PPOTrainer.train / RLOO (transcribed, see the entries' formulas)
    logr = lr - lp
    return {"k1": -logr, "k2": 0.5 * logr**2, "k3": torch.expm1(logr) - logr, "abs": logr.abs()}[e.estimator]


def autograd(loss_fn, theta, lr, ls) -> np.ndarray:
    th = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
    lp = torch.log_softmax(th, dim=-1)
    s = torch.exp(torch.tensor(ls, dtype=torch.float64))
    per_token = loss_fn(lp, torch.tensor(lr, dtype=torch.float64), torch.tensor(ls, dtype=torch.float64))
    (s * per_token).sum().backward()
    return th.grad.numpy()


def _log_softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max()
    return z - np.log(np.exp(z).sum())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheels", type=Path, default=Path("/tmp/wheels"), help="folder with the .whl files")
    args = ap.parse_args(argv)
    torch.set_default_dtype(torch.float64)
    with tempfile.TemporaryDirectory() as tmp:
        verl_root = _unpack(args.wheels, "verl-0.9.1-*.whl", Path(tmp))
        orlhf_root = _unpack(args.wheels, "openrlhf-0.11.2-*.whl", Path(tmp))
        fns = {"verl": verl_kl_penalty(verl_root), "openrlhf": openrlhf_compute_approx_kl(orlhf_root)}
        print(f"torch {torch.__version__}, float64; verl 0.9.1 core_algos.kl_penalty and OpenRLHF 0.11.2 "
              "compute_approx_kl imported from the wheels; TRL 1.16.0 GRPO/RLOO KL lines transcribed.")
        rng = np.random.default_rng(20251203)
        k = 8
        theta = 0.8 * rng.standard_normal(k)
        ref = 0.8 * rng.standard_normal(k)
        settings = {
            "on-policy": (theta, ref, None),
            "off-policy (π_old)": (theta, ref, theta + 0.4 * rng.standard_normal(k)),
        }
        far = theta.copy()
        far[:3] += np.array([9.0, -14.0, 25.0])  # log-ratios past verl's [-20, 20] and k3 > 10
        settings["large log-ratios, on-policy"] = (far, ref, None)
        old_far = theta.copy()
        old_far[0] -= 4.0  # π_θ/π_old > 10 on token 0: OpenRLHF's weight clip bites
        settings["π_θ/π_old > 10 on a token"] = (theta, ref, old_far)

        rows = [(name, name) for name in BASIC_OPTIONS]
        rows += [(entry_name(e), e) for e in loss_entries()]
        rows += [(entry_name(e), e) for e in cw.CROSSWALK if e.acts_on == "reward"]
        worst = {False: 0.0, True: 0.0}
        failures = 0
        for label, (th, rf, old) in settings.items():
            lr = _log_softmax(rf)
            ls = _log_softmax(th if old is None else old)
            print(f"\n== {label}: K = {k}, max |log r| = {np.abs(lr - _log_softmax(th)).max():.1f}")
            print(f"{'row':36s} {'max |autograd − core|':>22s}  {'‖core‖':>9s}  agree")
            for name, opt in rows:
                if isinstance(opt, str):
                    fn = lambda lp, lr_, ls_, key=opt: basic_loss(key, lp, lr_, LAM)  # noqa: E731
                else:
                    fn = lambda lp, lr_, ls_, e=opt: entry_loss(e, lp, lr_, ls_, fns)  # noqa: E731
                want = autograd(fn, th, lr, ls)
                got = expected_gradient(opt, th, rf, sampler=old, lam=LAM)
                diff = float(np.max(np.abs(want - got)))
                scale = float(np.linalg.norm(got))
                float32 = name.startswith("OpenRLHF:")
                tol = TOL_FLOAT32 if float32 else TOL
                rel = diff / max(1.0, scale)
                failures += rel > tol
                worst[float32] = max(worst[float32], rel)
                note = "  (float32 in the release)" if float32 else ""
                print(f"{name:36s} {diff:22.3e}  {scale:9.3g}  {'yes' if rel <= tol else 'NO'}{note}")
        print(
            f"\nlargest relative difference: {worst[False]:.3e} over the float64 rows (tolerance {TOL:g}), "
            f"{worst[True]:.3e} over OpenRLHF's float32 rows (tolerance {TOL_FLOAT32:g}); "
            f"{failures} row(s) out of tolerance"
        )
        return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
