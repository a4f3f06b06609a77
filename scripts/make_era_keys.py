"""Write kl_core/doctor/keys/eras/*.json: the settings of older releases, read from their tagged sources.

The config doctor infers which release a script was written for from the
settings it uses (:mod:`kl_core.doctor.releases`).  For that it needs the
settings each older era accepted, read here from the libraries' own git tags
with ``git show TAG:PATH`` and :mod:`ast` / PyYAML's safe loader, never running
any of their code:

* OpenRLHF before 0.10.2 (flat flags such as ``--init_kl_coef``): the
  ``parser.add_argument`` calls of ``openrlhf/cli/train_ppo_ray.py`` at tags
  v0.6.0.post1, v0.6.4, v0.7.5, v0.8.11, v0.9.10 and v0.10.1 (the last before
  0.10.2 renamed them), the newest tag's default winning; and at v0.5.9 and
  v0.6.0, which choose k3 with ``--use_kl_estimator_k3`` (``--kl_estimator``
  from 0.6.0.post1);
* OpenRLHF 0.10.2 to 0.11.1 (today's flag names, but no
  ``--actor.loss_agg_mode``): the same file at tags v0.10.2 to v0.11.0 and in
  the 0.11.1 wheel, which MIRRORS must hold (``pip download --no-deps
  openrlhf==0.11.1``); the next release's flags are the current profile's
  (``keys/openrlhf-0.11.2.json``);
* verl before 0.4.0 (a KL in the reward whenever ``use_kl_loss`` is off):
  ``verl/trainer/config/ppo_trainer.yaml`` at tags v0.2.0.post2 and
  v0.3.0.post1, and as vendored by TinyZero, Logic-RL, Search-R1 and SimpleRL-Zoo;
* the verl rllm vendors (its reward KL switched off in code): its ``verl/verl/trainer/config/ppo_trainer.yaml``
  at agentica-project/rllm 874daa4;
* verl 0.4.0 to 0.7.1 (no '+' options, the KL loss aggregated per micro-batch):
  ``ppo_trainer.yaml`` and ``ppo_megatron_trainer.yaml`` at tags v0.4.0 and v0.4.1,
  the resolved ``_generated_*.yaml`` configs at tags v0.5.0 to v0.7.0 and in the
  0.7.1 wheel; the next release's from the 0.8.0 wheel (MIRRORS must hold both:
  ``pip download --no-deps verl==0.7.1 verl==0.8.0``);
* TRL's GRPOConfig up to 0.18 (``beta`` defaulting to 0.04): the dataclass
  fields of ``trl/trainer/grpo_config.py`` at tags v0.14.0 to v0.16.1 (no
  ``loss_type``) and v0.17.0 to v0.18.2; and, as ``script_keys``, the fields of
  the other dataclasses ``trl/scripts/grpo.py`` parses at every tag of the two
  (:data:`TRL_SCRIPT_CLASSES`): flags the script takes, which it would refuse
  if no dataclass had them;
* TRL's RLOOConfig 0.10.1 to 0.21.0 (``kl_coef``, ``num_ppo_epochs``: the PPO-style RLOOTrainer): the
  fields of ``trl/trainer/rloo_config.py`` and of the ``OnPolicyConfig`` it extends (``trl/trainer/utils.py``)
  at tags v0.10.1 to v0.21.0, the next release's from v0.22.0;
* TRL's GRPOConfig 0.19.0 to 0.25.1 (no ``use_bias_correction_kl``: plain k3)
  and 0.26.0 to 1.9.2 (``use_bias_correction_kl`` off by default): the same
  file at tags v0.19.0 to v1.9.0; the fields of 1.10.0, the release after,
  from its wheel, which MIRRORS must hold beside the snapshots
  (``pip download --no-deps trl==1.10.0``).

Each file also lists the settings of the first release after the era
(``next_release``): a setting only the era had is evidence a script was
written for it, one the next release still had is not.  The TRL and OpenRLHF
eras also list every release of the era (``releases``, read at every tag
between the oldest and newest read) and the settings only some of them have
(``partial``, with those releases): TRL's ``steps_per_generation`` came in
0.18.0, inside the era 0.17.0–0.18.2.

Usage: ``uv run python scripts/make_era_keys.py MIRRORS [ERA ...]`` where MIRRORS
holds the bare git snapshots as ``owner+name/repo`` and ERA names the files to
write (``openrlhf-flat``, ``openrlhf-0.6.0``, ``openrlhf-0.11.1``, ``verl-pre-0.4``, ``verl-rllm``, ``verl-0.7``,
``trl-grpo-0.16``, ``trl-grpo-0.18``, ``trl-grpo-0.25``, ``trl-grpo-1.9``, ``trl-rloo-0.21``; all by
default), so one library's mirror is enough for its
eras.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_doctor_keys import VERL_CONFIGS, _dump, _fields, _flatten, _walk_arguments  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "kl_core" / "doctor" / "keys" / "eras"

OPENRLHF_TAGS = ("v0.10.1", "v0.9.10", "v0.8.11", "v0.7.5", "v0.6.4", "v0.6.0.post1")  # newest first: its default wins
OPENRLHF_060_TAGS = ("v0.6.0", "v0.5.9")
OPENRLHF_011_TAGS = ("v0.11.0", "v0.10.4", "v0.10.3", "v0.10.2")
OPENRLHF_CLI = "openrlhf/cli/train_ppo_ray.py"
CURRENT_KEYS = OUT.parent / "openrlhf-0.11.2.json"
OPENRLHF_0111_WHEEL = "openrlhf-0.11.1-cp311-cp311-manylinux1_x86_64.whl"
VERL_SOURCES = (  # newest first
    ("volcengine/verl", "v0.3.0.post1"),
    ("volcengine/verl", "v0.2.0.post2"),
    ("PeterGriffinJin/Search-R1", "a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06"),
    ("Unakar/Logic-RL", "9d2c457525ec14639e85afa12d49bb16efb053a4"),
    ("Jiayi-Pan/TinyZero", "95df88f2dcb05f33bd18da546531b52d0954c18b"),
    ("hkust-nlp/simpleRL-reason", "cf1c7858bfc145a27aa733e75d930d34f0d318a6"),  # SimpleRL-Zoo: verl 0.1 vendored
)
VERL_07_TAGS = ("v0.7.0", "v0.6.1", "v0.6.0", "v0.5.0", "v0.4.1", "v0.4.0")  # newest first
#: verl 0.4.x's configs, before verl resolved them into ``_generated_*.yaml`` (0.5.0 on).
VERL_04_CONFIGS = ("verl/trainer/config/ppo_trainer.yaml", "verl/trainer/config/ppo_megatron_trainer.yaml")
VERL_071_WHEEL = "verl-0.7.1-py3-none-any.whl"
VERL_080_WHEEL = "verl-0.8.0-py3-none-any.whl"
TRL_TAGS = ("v0.18.2", "v0.18.0", "v0.17.0")
TRL_16_TAGS = ("v0.16.1", "v0.16.0", "v0.15.2", "v0.15.0", "v0.14.0")
TRL_25_TAGS = ("v0.25.1", "v0.22.2", "v0.20.0", "v0.19.1", "v0.19.0")  # newest first
TRL_RLOO_TAGS = ("v0.21.0", "v0.19.1", "v0.17.0", "v0.14.0", "v0.12.2", "v0.11.4", "v0.10.1")  # newest first
TRL_19_TAGS = ("v1.9.0", "v1.5.1", "v1.0.0", "v0.29.1", "v0.26.2", "v0.26.0")  # the 1.9.1, 1.9.2 wheels' fields are 1.9.0's
#: Every tag of an era whose trl/scripts/grpo.py stops on an unknown flag (releases.toml strict_scripts).
TRL_16_ALL_TAGS = ("v0.16.1", "v0.16.0", "v0.15.2", "v0.15.1", "v0.15.0", "v0.14.0")
TRL_18_ALL_TAGS = ("v0.18.2", "v0.18.1", "v0.18.0", "v0.17.0")
#: The dataclasses trl/scripts/grpo.py parses besides GRPOConfig (v0.14.0 to v0.18.2: (GRPOScriptArguments,
#: GRPOConfig, ModelConfig), GRPOScriptArguments over ScriptArguments): their fields are flags it takes too.
TRL_SCRIPT_CLASSES = (("trl/scripts/grpo.py", "GRPOScriptArguments"), ("trl/scripts/utils.py", "ScriptArguments"),
                      ("trl/trainer/model_config.py", "ModelConfig"))
#: The first release that turned use_bias_correction_kl on: its wheel (the mirror's tags end at v1.9.0).
TRL_110_WHEEL = "trl-1.10.0-py3-none-any.whl"


def _show(mirrors: Path, repo: str, rev: str, path: str) -> tuple[str, str]:
    git = mirrors / repo.replace("/", "+") / "repo"
    commit = subprocess.run(["git", f"--git-dir={git}", "rev-list", "-n1", rev], check=True,
                            capture_output=True, text=True).stdout.strip()
    text = subprocess.run(["git", f"--git-dir={git}", "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout
    return commit, text


def _release_tags(mirrors: Path, repo: str, oldest: str, newest: str) -> tuple[str, ...]:
    """Every release tag of ``repo`` from ``oldest`` to ``newest`` (no release candidates), oldest first."""
    git = mirrors / repo.replace("/", "+") / "repo"
    tags = subprocess.run(["git", f"--git-dir={git}", "tag", "--list", "v*"], check=True, capture_output=True,
                          text=True).stdout.split()
    tags = [t for t in tags if "rc" not in t and _version(t) is not None]
    lo, hi = _version(oldest), _version(newest)
    return tuple(sorted((t for t in tags if lo <= _version(t) <= hi), key=_version))


def _version(tag: str) -> tuple[int, ...] | None:
    parts = tag.lstrip("v").replace(".post", ".").split(".")
    if not all(p.isdigit() for p in parts):
        return None
    nums = [int(p) for p in parts]
    return (*nums[:3], *[0] * (3 - len(nums[:3])), nums[3] if len(nums) > 3 else -1)


def _presence(mirrors: Path, read: Reader, repo: str, tags: tuple[str, ...]) -> tuple[list[str], dict[str, list[str]]]:
    """The era's releases (``tags``, oldest first, without the v) and, for each setting that only some of them
    have, the releases that have it: a script using it was written for those (Era.partial)."""
    have = {tag: set(read(mirrors, (tag,))[0]) for tag in tags}
    releases = [t.lstrip("v") for t in tags]
    every = set().union(*have.values())
    partial = {k: [t.lstrip("v") for t in tags if k in have[t]] for k in sorted(every)
               if not all(k in have[t] for t in tags)}
    return releases, partial


def _write(name: str, library: str, era: str, sources: list[dict[str, str]], trainer: str, keys: dict[str, Any],
           later: dict[str, Any], script_keys: list[str] | None = None,
           presence: tuple[list[str], dict[str, list[str]]] | None = None) -> None:
    table: dict[str, Any] = {"files": sorted({s["path"] for s in sources})}
    if script_keys is not None:  # flags the era's script takes besides its config's (Era.script_keys)
        table["script_keys"] = script_keys
    if presence is not None:  # the settings only some of the era's releases have (Era.partial)
        table["releases"], table["partial"] = presence
    doc = {"library": library, "era": era, "generated_by": "scripts/make_era_keys.py", "sources": sources,
           "next_release": later, "trainers": {trainer: {**table, "keys": dict(sorted(keys.items()))}}}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text(_dump(doc), encoding="utf-8")
    print(f"{name}: {len(keys)} keys from {len(sources)} sources")


def _openrlhf(mirrors: Path, tags: tuple[str, ...]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The flags of ``train_ppo_ray`` at each tag, the first tag's default winning."""
    keys: dict[str, Any] = {}
    sources = []
    for tag in tags:
        commit, text = _show(mirrors, "OpenRLHF/OpenRLHF", tag, OPENRLHF_CLI)
        out: dict[str, Any] = {}
        _walk_arguments(ast.parse(text).body, {}, text, out)
        for k, v in out.items():
            keys.setdefault(k, v)
        sources.append({"repo": "OpenRLHF/OpenRLHF", "tag": tag, "commit": commit, "path": OPENRLHF_CLI})
    return keys, sources


def openrlhf_0111(mirrors: Path) -> None:
    """OpenRLHF 0.10.2 to 0.11.1: today's names, before --actor.loss_agg_mode (the 0.11.1 wheel: the tags end at
    v0.11.0); the next release's flags are the current profile's, 0.11.2's."""
    keys, sources = _openrlhf(mirrors, OPENRLHF_011_TAGS)
    with zipfile.ZipFile(mirrors / OPENRLHF_0111_WHEEL) as zf:
        text = zf.read(f"openrlhf-0.11.1.data/purelib/{OPENRLHF_CLI}").decode("utf-8")
    out: dict[str, Any] = {}
    _walk_arguments(ast.parse(text).body, {}, text, out)
    keys = {**keys, **out}  # the newest release's default wins
    sources.insert(0, {"release": "0.11.1", "wheel": OPENRLHF_0111_WHEEL, "path": OPENRLHF_CLI})
    current = json.loads(CURRENT_KEYS.read_text(encoding="utf-8"))
    later = {"release": "0.11.2", "read_from": f"kl_core/doctor/keys/{CURRENT_KEYS.name}",
             "keys": sorted(current["trainers"]["train_ppo_ray"]["keys"])}
    _write("openrlhf-0.11.1.json", "OpenRLHF", "0.10.2-0.11.1", sources, "train_ppo_ray", keys, later)


def verl_pre_04(mirrors: Path) -> None:
    """verl before 0.4.0, and the forks that vendor it."""
    keys: dict[str, Any] = {}
    sources = []
    path = "verl/trainer/config/ppo_trainer.yaml"
    for repo, rev in VERL_SOURCES:
        commit, text = _show(mirrors, repo, rev, path)
        _flatten(yaml.safe_load(text), "", keys)  # setdefault: the first source's default wins
        sources.append({"repo": repo, "tag": rev, "commit": commit, "path": path})
    commit, text = _show(mirrors, "volcengine/verl", "v0.4.0", path)
    out: dict[str, Any] = {}
    _flatten(yaml.safe_load(text), "", out)
    later = {"repo": "volcengine/verl", "tag": "v0.4.0", "commit": commit, "path": path, "keys": sorted(out)}
    _write("verl-pre-0.4.json", "verl", "pre-0.4", sources, "main_ppo", keys, later)


RLLM = ("agentica-project/rllm", "874daa4acb7f451dc2a4b2b6e8ce28f5aa88d1f5")


def verl_rllm(mirrors: Path) -> None:
    """The verl rllm vendors (its verl/ folder: version 0.1, the reward KL switched off in code).  Its
    ``next_release`` lists verl v0.2.0.post2's, v0.3.0.post1's and v0.4.0's settings too: for a fork only its own settings
    point to it, not those it shares with the releases it was forked from."""
    keys: dict[str, Any] = {}
    path = "verl/verl/trainer/config/ppo_trainer.yaml"
    commit, text = _show(mirrors, *RLLM, path)
    _flatten(yaml.safe_load(text), "", keys)
    sources = [{"repo": RLLM[0], "tag": RLLM[1], "commit": commit, "path": path}]
    shared: dict[str, Any] = {}
    base = "verl/trainer/config/ppo_trainer.yaml"
    for tag in ("v0.2.0.post2", "v0.3.0.post1", "v0.4.0"):
        _flatten(yaml.safe_load(_show(mirrors, "volcengine/verl", tag, base)[1]), "", shared)
    later = {"repo": "volcengine/verl", "tags": ["v0.2.0.post2", "v0.3.0.post1", "v0.4.0"], "path": base,
             "keys": sorted(shared)}
    _write("verl-rllm.json", "verl", "rllm", sources, "main_ppo", keys, later)


def _verl_wheel(mirrors: Path, wheel: str) -> dict[str, Any]:
    """The settings of a verl wheel's resolved trainer configs, the default trainer's default winning."""
    keys: dict[str, Any] = {}
    with zipfile.ZipFile(mirrors / wheel) as zf:
        for member in VERL_CONFIGS:
            _flatten(yaml.safe_load(zf.read(member).decode("utf-8")), "", keys)
    return keys


def verl_07(mirrors: Path) -> None:
    """verl 0.4.0 to 0.7.1: the 0.7.1 wheel's configs, then each tag's, the newest default winning."""
    keys = _verl_wheel(mirrors, VERL_071_WHEEL)
    sources = [{"release": "0.7.1", "wheel": VERL_071_WHEEL, "path": path} for path in VERL_CONFIGS]
    git = mirrors / "volcengine+verl" / "repo"
    for tag in VERL_07_TAGS:
        listed = subprocess.run(["git", f"--git-dir={git}", "ls-tree", "--name-only", tag, "verl/trainer/config/"],
                                check=True, capture_output=True, text=True).stdout.split()
        for path in (p for p in (*VERL_CONFIGS, *VERL_04_CONFIGS) if p in listed):
            if path in VERL_04_CONFIGS and any(p in listed for p in VERL_CONFIGS):
                continue  # 0.5.0 on: the resolved configs hold these files' settings
            commit, text = _show(mirrors, "volcengine/verl", tag, path)
            _flatten(yaml.safe_load(text), "", keys)
            sources.append({"repo": "volcengine/verl", "tag": tag, "commit": commit, "path": path})
    later = {"release": "0.8.0", "wheel": VERL_080_WHEEL, "keys": sorted(_verl_wheel(mirrors, VERL_080_WHEEL))}
    _write("verl-0.7.json", "verl", "0.4.0-0.7.1", sources, "main_ppo", keys, later)


def _grpo_fields(mirrors: Path, tags: tuple[str, ...]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """GRPOConfig's own fields at each tag, the first tag's default winning."""
    keys: dict[str, Any] = {}
    sources = []
    path = "trl/trainer/grpo_config.py"
    for tag in tags:
        commit, text = _show(mirrors, "huggingface/trl", tag, path)
        for k, v in _fields(text, "GRPOConfig")[1].items():
            keys.setdefault(k, v)
        sources.append({"repo": "huggingface/trl", "tag": tag, "commit": commit, "path": path})
    return keys, sources


def _rloo_fields(mirrors: Path, tags: tuple[str, ...]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """RLOOConfig's fields at each tag with those of OnPolicyConfig, the class it extends up to 0.21.0 (both TRL's
    own), the first tag's default winning; from 0.22.0 on RLOOConfig alone (over TrainingArguments)."""
    keys: dict[str, Any] = {}
    sources = []
    for tag in tags:
        commit, text = _show(mirrors, "huggingface/trl", tag, "trl/trainer/rloo_config.py")
        bases, own = _fields(text, "RLOOConfig")
        for k, v in own.items():
            keys.setdefault(k, v)
        sources.append({"repo": "huggingface/trl", "tag": tag, "commit": commit, "path": "trl/trainer/rloo_config.py"})
        if "OnPolicyConfig" in bases:
            commit, text = _show(mirrors, "huggingface/trl", tag, "trl/trainer/utils.py")
            for k, v in _fields(text, "OnPolicyConfig")[1].items():
                keys.setdefault(k, v)
            sources.append({"repo": "huggingface/trl", "tag": tag, "commit": commit, "path": "trl/trainer/utils.py"})
    return keys, sources


def _trl_script_keys(mirrors: Path, tags: tuple[str, ...]) -> list[str]:
    """The fields of trl/scripts/grpo.py's other dataclasses (:data:`TRL_SCRIPT_CLASSES`) at any of ``tags``."""
    out: set[str] = set()
    for tag in tags:
        for path, cls in TRL_SCRIPT_CLASSES:
            out |= set(_fields(_show(mirrors, "huggingface/trl", tag, path)[1], cls)[1])
    return sorted(out)


def trl_grpo_19(mirrors: Path) -> None:
    """TRL's GRPOConfig 0.26.0 to 1.9.2: use_bias_correction_kl there, but off by default."""
    keys, sources = _grpo_fields(mirrors, TRL_19_TAGS)
    path = "trl/trainer/grpo_config.py"
    with zipfile.ZipFile(mirrors / TRL_110_WHEEL) as zf:
        text = zf.read(path).decode("utf-8")
    later = {"release": "1.10.0", "wheel": TRL_110_WHEEL, "path": path, "keys": sorted(_fields(text, "GRPOConfig")[1])}
    releases, partial = _presence(mirrors, _grpo_fields, "huggingface/trl",
                                  _release_tags(mirrors, "huggingface/trl", TRL_19_TAGS[-1], TRL_19_TAGS[0]))
    # 1.9.1 and 1.9.2 (wheels) have 1.9.0's fields
    _write("trl-grpo-1.9.json", "TRL", "grpo-1.9", sources, "grpo", keys, later,
           presence=([*releases, "1.9.1", "1.9.2"], {k: [*v, "1.9.1", "1.9.2"] if "1.9.0" in v else v
                                                   for k, v in partial.items()}))


Reader = Callable[[Path, tuple[str, ...]], tuple[dict[str, Any], list[dict[str, str]]]]


@dataclass(frozen=True)
class TaggedEra:
    """An era read from tags alone: its file, its tags (newest first) and the first tag after it."""

    file: str
    library: str
    era: str
    trainer: str
    read: Reader
    tags: tuple[str, ...]
    next_tag: str
    script_tags: tuple[str, ...] = ()  # every tag of the era, for a script that stops on an unknown flag

    def __call__(self, mirrors: Path) -> None:
        keys, sources = self.read(mirrors, self.tags)
        later_keys, [later] = self.read(mirrors, (self.next_tag,))
        script = _trl_script_keys(mirrors, self.script_tags) if self.script_tags else None
        repo = sources[0]["repo"]
        presence = _presence(mirrors, self.read, repo, _release_tags(mirrors, repo, self.tags[-1], self.tags[0]))
        _write(self.file, self.library, self.era, sources, self.trainer, keys, {**later, "keys": sorted(later_keys)},
               script, presence)


ERAS: dict[str, Callable[[Path], None]] = {
    # OpenRLHF 0.5.9 and 0.6.0: the flat flags, k3 through --use_kl_estimator_k3 (no --kl_estimator)
    "openrlhf-0.6.0": TaggedEra("openrlhf-0.6.0.json", "OpenRLHF", "0.5.9-0.6.0", "train_ppo_ray", _openrlhf,
                                OPENRLHF_060_TAGS, "v0.6.0.post1"),
    # OpenRLHF 0.6.0.post1 to 0.10.1: the flat flags, with --kl_estimator
    "openrlhf-flat": TaggedEra("openrlhf-flat.json", "OpenRLHF", "flat", "train_ppo_ray", _openrlhf, OPENRLHF_TAGS,
                               "v0.10.2"),
    "openrlhf-0.11.1": openrlhf_0111,
    "verl-pre-0.4": verl_pre_04,
    "verl-rllm": verl_rllm,
    "verl-0.7": verl_07,
    # TRL's GRPOConfig 0.14.0 to 0.16.1: beta 0.04, no loss_type
    "trl-grpo-0.16": TaggedEra("trl-grpo-0.16.json", "TRL", "grpo-0.16", "grpo", _grpo_fields, TRL_16_TAGS, "v0.17.0",
                               TRL_16_ALL_TAGS),
    # 0.17.0 to 0.18.2: beta 0.04, loss_type (default bnpo)
    "trl-grpo-0.18": TaggedEra("trl-grpo-0.18.json", "TRL", "grpo-0.18", "grpo", _grpo_fields, TRL_TAGS, "v0.19.0",
                               TRL_18_ALL_TAGS),
    # 0.19.0 to 0.25.1: beta 0.0, no use_bias_correction_kl (plain k3)
    "trl-grpo-0.25": TaggedEra("trl-grpo-0.25.json", "TRL", "grpo-0.25", "grpo", _grpo_fields, TRL_25_TAGS, "v0.26.0"),
    "trl-grpo-1.9": trl_grpo_19,
    # TRL's RLOOConfig 0.10.1 to 0.21.0: kl_coef (0.05), num_ppo_epochs (4), the PPO-style RLOOTrainer
    "trl-rloo-0.21": TaggedEra("trl-rloo-0.21.json", "TRL", "rloo-0.21", "rloo", _rloo_fields, TRL_RLOO_TAGS,
                               "v0.22.0"),
}


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    mirrors = Path(sys.argv[1])
    names = sys.argv[2:] or list(ERAS)
    unknown = [n for n in names if n not in ERAS]
    if unknown:
        sys.exit(f"ERA must be one of {list(ERAS)}, got {unknown}")
    for name in names:
        ERAS[name](mirrors)


if __name__ == "__main__":
    main()
