"""The doctor's safe readers: shell scripts, Hydra overrides, flags, YAML, JSON and Python, never run."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from kl_core.doctor.parse import (
    MAX_BYTES,
    MAX_VALUES,
    UnreadableInput,
    Word,
    decode,
    parse_flags,
    parse_overrides,
    read,
    read_python,
    read_shell,
    read_structured,
    scalar,
)

VERL = ("verl.trainer.main_ppo", "verl/trainer/main_ppo.py")
ORL = ("openrlhf.cli.train_ppo_ray",)


def words(*texts: str) -> tuple[Word, ...]:
    return tuple(Word(t) for t in texts)


def args(parsed) -> list[str]:
    return [w.text for w in parsed.arguments]


# --------------------------------------------------------------------------- decode
def test_decode_limits_size_binary_and_encoding():
    with pytest.raises(UnreadableInput, match=r"at most 256 KiB"):
        decode(b"a" * (MAX_BYTES + 1))
    assert decode(b"a" * MAX_BYTES) == "a" * MAX_BYTES
    with pytest.raises(UnreadableInput, match="binary file"):
        decode(b"\x01\x02\x00\x00")
    with pytest.raises(UnreadableInput, match=r"not text: it looks like a ZIP archive or an Excel workbook"):
        decode(b"PK\x03\x04\x00\x00")
    with pytest.raises(UnreadableInput, match=r"looks like a PNG image"):
        decode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(UnreadableInput, match="not UTF-8 text"):
        decode(b"beta: \xff\xfe")
    with pytest.raises(UnreadableInput, match="empty"):
        decode("  \n ")
    assert decode(b"\xef\xbb\xbfa=1\r\nb=2\r") == "a=1\nb=2\n"


@pytest.mark.parametrize(
    ("text", "value"),
    [("True", True), ("false", False), ("null", None), ("None", None), ("42", 42), ("-3", -3),
     ("1e-3", 1e-3), ("0.001", 0.001), (".5", 0.5), ("1_000", 1000), ("'error'", "error"),
     ('["console","wandb"]', ["console", "wandb"]), ("{a: 1}", {"a": 1}), ("low_var_kl+", "low_var_kl+"),
     ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B"), ("[unclosed", "[unclosed")],
)
def test_scalar(text, value):
    assert scalar(text) == value


def test_scalar_infinity():
    assert math.isinf(scalar("inf")) and scalar("-inf") < 0


# --------------------------------------------------------------------------- shell
def test_continuations_comments_quotes_env_prefix_and_pipes():
    text = (
        "# a comment\n"
        "PYTHONUNBUFFERED=1 python3 -m verl.trainer.main_ppo \\\n"
        "  algorithm.kl_penalty='low_var_kl' \\\n"
        '  trainer.logger=\'["console","wandb"]\' \\\n'
        "  trainer.project_name=\"my run\" # trailing comment\n"
        "  trainer.total_epochs=15 2>&1 | tee log.txt\n"
    )
    p = read_shell(text, VERL)
    assert p.names == ("verl.trainer.main_ppo",)
    assert args(p) == ["algorithm.kl_penalty=low_var_kl", 'trainer.logger=["console","wandb"]',
                       "trainer.project_name=my run"]


def test_script_variables_and_defaults_are_substituted():
    text = (
        "kl_coef=${KL_COEF:-0.001}\n"
        "export TYPE=low_var_kl\n"
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.kl_loss_coef=$kl_coef "
        "actor_rollout_ref.actor.kl_loss_type=${TYPE} data.train_files=$HOME/x.parquet\n"
    )
    p = read_shell(text, VERL)
    w = {x.text.split("=")[0]: x for x in p.arguments}
    coef = w["actor_rollout_ref.actor.kl_loss_coef"]
    assert coef.text.endswith("=0.001") and coef.literal and "default of $KL_COEF" in coef.origin
    assert w["actor_rollout_ref.actor.kl_loss_type"].text.endswith("=low_var_kl")
    home = w["data.train_files"]
    assert not home.literal and home.text == "data.train_files=$HOME/x.parquet"
    assert "$HOME is not set in the script" in home.origin


def test_values_set_in_branches_are_not_literal():
    text = (
        "bs=1024\n"
        'if [ "$DEVICE" = npu ]; then\n'
        "    bs=16\n"
        "fi\n"
        "[ -n \"$X\" ] && coef=0.1\n"
        "case $D in\n  gpu) tp=2 ;;\nesac\n"
        "python3 -m verl.trainer.main_ppo data.train_batch_size=$bs algorithm.kl_ctrl.kl_coef=$coef x.tp=$tp\n"
    )
    p = read_shell(text, VERL)
    assert [w.literal for w in p.arguments] == [False, False, False]
    assert "inside an if/case block" in p.arguments[0].origin


def test_arrays_with_comments_and_branch_elements():
    text = (
        "ARGS=(\n   --algo.kl.use_loss\n   # --critic.adam.lr 9e-6\n   --algo.kl.estimator k2\n)\n"
        "EXTRA=()\n"
        "if true; then\n  EXTRA+=(--ds.zero_stage 3)\nfi\n"
        'ray job submit --address="http://127.0.0.1:8265" \\\n   -- python3 -m openrlhf.cli.train_ppo_ray \\\n'
        '   ${ARGS[@]} "${EXTRA[@]}" "$@"\n'
    )
    p = read_shell(text, ORL)
    assert args(p) == ["--algo.kl.use_loss", "--algo.kl.estimator", "k2"]
    assert any("EXTRA has elements added inside if/case" in n for n in p.notes)
    assert any("$@ passes the script's own arguments" in n for n in p.notes)
    assert p.command == "ray job submit --address=http://127.0.0.1:8265 -- python3 -m openrlhf.cli.train_ppo_ray"


def test_the_trainer_command_is_found_among_others_and_the_first_is_read():
    text = (
        "python3 examples/data_preprocess/gsm8k.py --local_dir x\n"
        "python3 -m verl.trainer.main_ppo a.b=1\n"
        "python3 /opt/verl/verl/trainer/main_ppo.py a.b=2\n"
    )
    p = read_shell(text, VERL)
    assert args(p) == ["a.b=1"]
    assert any("2 times" in n for n in p.notes)


def test_heredoc_and_command_substitution_are_skipped_not_run():
    text = (
        "cat <<EOF > notes.txt\nactor_rollout_ref.actor.kl_loss_type=abs\nEOF\n"
        "N=$(nproc)\n"
        "python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=$N\n"
    )
    p = read_shell(text, VERL)
    assert args(p) == ["trainer.n_gpus_per_node=$N"]
    assert not p.arguments[0].literal and "runs a command" in p.arguments[0].origin


def test_pasted_overrides_without_a_command_are_all_read():
    p = read_shell("actor_rollout_ref.actor.use_kl_loss=True\nactor_rollout_ref.actor.kl_loss_type=k3\n", VERL)
    assert p.names == () and args(p) == ["actor_rollout_ref.actor.use_kl_loss=True", "actor_rollout_ref.actor.kl_loss_type=k3"]


@pytest.mark.parametrize(("text", "what"), [("python3 -m verl.trainer.main_ppo a='b\n", "quote"),
                                           ("ARGS=(\n --a 1\n", "array"),
                                           ('x="unterminated\n', "quote")])
def test_unclosed_quotes_and_arrays_are_one_clear_error(text, what):
    with pytest.raises(UnreadableInput, match=f"unclosed.*{what}|{what}.*unclosed|unclosed"):
        read_shell(text, VERL)


# --------------------------------------------------------------------------- Hydra
def test_overrides_add_force_delete_and_interpolations():
    got, notes = parse_overrides(words(
        "algorithm.kl_penalty=kl", "+ray_kwargs.ray_init.num_gpus=8", "++a.b=null", "~c.d",
        "x.y=${oc.env:COEF}", "--config-name=ppo_megatron_trainer", "stray",
    ))
    by = {s.key: s for s in got}
    assert by["algorithm.kl_penalty"].value == "kl" and by["algorithm.kl_penalty"].literal
    assert by["ray_kwargs.ray_init.num_gpus"].op == "+" and by["ray_kwargs.ray_init.num_gpus"].value == 8
    assert by["a.b"].op == "++" and by["a.b"].value is None
    assert by["c.d"].op == "~"
    assert not by["x.y"].literal and by["x.y"].text == "${oc.env:COEF}"
    assert any("--config-name ppo_megatron_trainer" in n for n in notes)
    assert any("stray: not a key=value override" in n for n in notes)


# --------------------------------------------------------------------------- flags
SPECS = {
    "--algo.kl.use_loss": SimpleNamespace(action="store_true", nargs=None, type=None),
    "--algo.kl.estimator": SimpleNamespace(action="store", nargs=None, type="str"),
    "--algo.kl.init_coef": SimpleNamespace(action="store", nargs=None, type="float"),
    "--actor.eps_clip_low_high": SimpleNamespace(action="store", nargs=2, type="float"),
    "--algo.advantage.is_correction_threshold": SimpleNamespace(action="store", nargs="+", type="float"),
    "--actor.muon.no_nesterov": SimpleNamespace(action="store_false", nargs=None, type=None),
}


def test_flags_as_argparse_reads_them():
    got, notes = parse_flags(words(
        "--algo.kl.use_loss", "--algo.kl.estimator", "k3", "--algo.kl.init_coef=-1e-3",
        "--actor.eps_clip_low_high", "0.2", "0.27", "--algo.advantage.is_correction_threshold", "0.5", "5",
        "--actor.muon.no_nesterov", "--algo.kl.est", "k2", "--unknown.flag", "a", "b", "--bare",
    ), SPECS)
    by = {s.key: s.value for s in got}
    assert by["--algo.kl.use_loss"] is True
    assert by["--algo.kl.init_coef"] == -1e-3
    assert by["--actor.eps_clip_low_high"] == [0.2, 0.27]
    assert by["--algo.advantage.is_correction_threshold"] == [0.5, 5]
    assert by["--actor.muon.no_nesterov"] is False
    assert [s.value for s in got if s.key == "--algo.kl.estimator"] == ["k3", "k2"]  # abbreviation resolved
    assert any("abbreviation of --algo.kl.estimator" in n for n in notes)
    assert by["--unknown.flag"] == ["a", "b"] and by["--bare"] is True


def test_a_store_flag_without_its_value_is_not_read_as_true():
    # argparse reads "-inf" (no digit after the dash) as a flag: "--algo.kl.init_coef -inf" stops the
    # trainer with "expected one argument"; the doctor read the coefficient as True
    got, notes = parse_flags(words("--algo.kl.init_coef", "-inf", "--algo.kl.use_loss", "--algo.kl.estimator"), SPECS)
    by = {s.key: s.value for s in got}
    assert "--algo.kl.init_coef" not in by and "--algo.kl.estimator" not in by
    assert by["--algo.kl.use_loss"] is True
    assert any(n.startswith("--algo.kl.init_coef -inf: argparse reads -inf as a flag") and
               "write --algo.kl.init_coef=-inf" in n for n in notes)
    assert any(n.startswith("--algo.kl.estimator ends the command without the value it needs") for n in notes)
    got, notes = parse_flags(words("--algo.kl.init_coef=-inf", "--algo.kl.init_coef", "-1e-3"), SPECS)
    assert [s.value for s in got] == [-math.inf, -1e-3] and not any("expected one argument" in n for n in notes)


def test_hf_argparser_dashes_and_negation():
    specs = {"--use_bias_correction_kl": SimpleNamespace(action=None, nargs=None, type="bool"),
             "--beta": SimpleNamespace(action=None, nargs=None, type="float")}
    got, _ = parse_flags(words("--use-bias-correction-kl", "false", "--beta", "0.04"), specs, dashes=True, negate=True)
    assert [(s.key, s.value) for s in got] == [("--use_bias_correction_kl", False), ("--beta", 0.04)]
    got, _ = parse_flags(words("--no_use_bias_correction_kl"), specs, dashes=True, negate=True)
    assert [(s.key, s.value) for s in got] == [("--use_bias_correction_kl", False)]


def test_flag_values_that_are_not_literal():
    got, _ = parse_flags((Word("--algo.kl.init_coef"), Word("$COEF", 0, "$COEF is not set in the script")), SPECS)
    assert not got[0].literal and got[0].value is None and got[0].text == "$COEF"


# --------------------------------------------------------------------------- YAML / JSON
def test_yaml_is_flattened_to_dotted_keys():
    p = read_structured(
        "defaults:\n  - ppo_trainer\n  - _self_\nactor_rollout_ref:\n  actor:\n    kl_loss_type: low_var_kl\n"
        "    kl_loss_coef: 0.001\nalgorithm:\n  kl_ctrl:\n    kl_coef: ${oc.env:KL}\nreward_funcs: [a, b]\n", "yaml")
    by = {s.key: s for s in p.settings}
    assert by["actor_rollout_ref.actor.kl_loss_type"].value == "low_var_kl"
    assert by["actor_rollout_ref.actor.kl_loss_coef"].value == 0.001
    assert not by["algorithm.kl_ctrl.kl_coef"].literal
    assert by["reward_funcs"].value == ["a", "b"]
    assert by["defaults"].value == ["ppo_trainer", "_self_"]  # set aside by the diagnosis, for Hydra only
    from kl_core.doctor.diagnosis import diagnose

    text = "defaults:\n  - ppo_trainer\nactor_rollout_ref:\n  actor:\n    kl_loss_coef: 0.001\n"
    assert any("defaults: Hydra's own section" in str(n) for n in diagnose(text, filename="c.yaml").notes)
    # TRL's reader has no such section (an audit: `defaults: &kl` anchoring a TRL YAML's values)
    trl = diagnose("defaults: &kl\n  beta: 0.04\nbeta: 0.04\nnum_generations: 8\n", filename="c.yaml")
    assert trl.library == "TRL" and not any("Hydra's own section" in str(n) for n in trl.notes)
    assert "defaults.beta" in {u.key for u in trl.unrecognised}


def test_yaml_tags_that_construct_objects_are_refused_and_nothing_runs(tmp_path):
    target = tmp_path / "pwned"
    payloads = [
        f'beta: !!python/object/apply:os.system ["touch {target}"]',
        f"beta: !!python/object/new:subprocess.Popen [['touch', '{target}']]",
        "beta: !!python/name:os.system",
        "beta: !custom 1",
    ]
    for payload in payloads:
        with pytest.raises(UnreadableInput, match="tag .* is not allowed|YAML tag"):
            read_structured(payload, "yaml")
    assert not target.exists()


def test_yaml_alias_bombs_and_deep_nesting_stop_with_one_message():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdef", "bcdefg", strict=True))
    with pytest.raises(UnreadableInput, match=f"more than {MAX_VALUES:,} values"):
        read_structured(bomb, "yaml")
    with pytest.raises(UnreadableInput, match="nests too deeply|not valid"):
        read_structured("a: " + "[" * 100_000, "yaml")
    with pytest.raises(UnreadableInput, match="nests too deeply"):
        read_structured('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "json")


@pytest.mark.parametrize(
    ("text", "kind", "match"),
    [("a: [1, 2\n", "yaml", r"not valid YAML: .*line"), ("- 1\n- 2\n", "yaml", "a list, not a mapping"),
     ('{"a": 1,}', "json", r"not valid JSON: .*line 1"), ("[1]", "json", "not a mapping")],
)
def test_bad_documents_are_one_sentence(text, kind, match):
    with pytest.raises(UnreadableInput, match=match):
        read_structured(text, kind)


# --------------------------------------------------------------------------- Python
def test_python_takes_literal_keywords_and_names_the_rest():
    p = read_python(
        "import os\nfrom trl import GRPOConfig\nbeta = 0.1\n"
        "args = GRPOConfig(beta=beta, loss_type='dr_grpo', epsilon=0.2 + 0.08, reward_weights=[1.0, 0.5],"
        " output_dir=os.environ['OUT'], **extra)\n"
    )
    by = {s.key: s for s in p.settings}
    assert p.names == ("GRPOConfig",)
    assert by["loss_type"].value == "dr_grpo" and by["reward_weights"].value == [1.0, 0.5]
    assert by["beta"].literal and by["beta"].value == 0.1 and "line 3" in str(by["beta"].origin)  # a module constant
    assert not by["output_dir"].literal and by["output_dir"].text == "os.environ['OUT']"
    assert not by["**extra"].literal
    assert not by["epsilon"].literal and by["epsilon"].text == "0.2 + 0.08"  # arithmetic is not a literal


def test_python_resolves_names_assigned_one_literal_only():
    p = read_python("from trl import GRPOConfig\nBETA = 0.02\nLR = 1e-6\nLR = 2e-6\nN = f()\n"
                    "def main():\n    args = GRPOConfig(beta=BETA, learning_rate=LR, num_generations=N)\n")
    by = {s.key: s for s in p.settings}
    assert by["beta"].literal and by["beta"].value == 0.02
    assert not by["learning_rate"].literal and not by["num_generations"].literal  # assigned twice / by a call


def test_python_without_a_config_call_is_read_as_python_never_as_shell():
    trl_parser = ('"""\naccelerate launch examples/scripts/grpo.py --beta 0.05 --loss_type dr_grpo\n"""\n'
                  "from trl import GRPOConfig, GRPOTrainer, ModelConfig, TrlParser\n"
                  "parser = TrlParser((GRPOConfig, ModelConfig))\n")
    p = read(trl_parser, ())
    assert p.kind == "command" and p.names == ("GRPOConfig",)
    assert [w.text for w in p.arguments] == ["--beta", "0.05", "--loss_type", "dr_grpo"]
    assert "TrlParser((GRPOConfig, ModelConfig))" in str(p.notes[0])
    with pytest.raises(UnreadableInput, match="TrlParser.*not from this file"):
        read(trl_parser.split('"""\n', 2)[2], ())
    with pytest.raises(UnreadableInput, match="holds no call") as exc:  # LoraConfig is peft's, not TRL's
        read("from peft import LoraConfig\nfrom trl import GRPOTrainer\ntrainer = GRPOTrainer(peft_config=LoraConfig(r=8))\n", ())
    assert "a TRL config" not in str(exc.value)


def test_python_that_would_run_code_is_never_run(tmp_path, capsys):
    target = tmp_path / "pwned"
    src = (
        "import os, subprocess\n"
        f"open({str(target)!r}, 'w').write('x')\n"
        "print('EXECUTED')\n"
        "GRPOConfig(beta=__import__('os').system('echo EXECUTED'), "
        f"loss_type=open({str(target)!r}, 'w').write('y'), num_iterations=(lambda: print('EXECUTED'))())\n"
    )
    p = read_python(src)
    assert not target.exists()
    assert "EXECUTED" not in capsys.readouterr().out
    assert all(not s.literal for s in p.settings)


@pytest.mark.parametrize(
    ("src", "match"),
    [("GRPOConfig(beta=\n", r"does not parse: .*line"), ("x = 1\n", "no call of GRPOConfig"),
     ("GRPOConfig(beta=" + "(" * 5000 + "1" + ")" * 5000 + ")", "nests too deeply|does not parse")],
)
def test_bad_python_is_one_sentence(src, match):
    with pytest.raises(UnreadableInput, match=match):
        read_python(src)


def test_several_calls_read_the_first_and_say_so():
    p = read_python("a = RLOOConfig(beta=0.1)\nb = GRPOConfig(beta=0.2)\n")
    assert p.names == ("RLOOConfig",) and any("2 config calls" in n for n in p.notes)


# --------------------------------------------------------------------------- routing
@pytest.mark.parametrize(
    ("text", "kind"),
    [("training_args = GRPOConfig(beta=0.1)\n", "python"), ('{"beta": 0.1}', "json"),
     ("# trl grpo --config x.yaml\nbeta: 0.1\nloss_type: grpo\n", "yaml"),
     ("python3 -m verl.trainer.main_ppo \\\n    actor_rollout_ref.actor.use_kl_loss=True \\\n    a.b=1\n", "command"),
     ("--algo.kl.use_loss --algo.kl.estimator k2\n", "command")],
)
def test_read_routes_by_form(text, kind):
    assert read(text, VERL + ORL).kind == kind


def test_plain_override_values_are_typed_as_hydras_grammar_types_them():
    """parse_overrides skips Hydra's grammar for plain values (speed): scalar() must type them the same."""
    import math
    import random

    from hydra.core.override_parser.overrides_parser import OverridesParser

    from kl_core.doctor.parse import _FAST_VALUE

    parser = OverridesParser.create()
    rng = random.Random(2)
    samples = ["True", "false", "NULL", "null", "inf", "-inf", "nan", "1e-6", "low_var_kl", "token-mean",
               "Qwen2.5-7B", "k3", "1.0e+3", "+1", "1.e5", "e5"]
    for alpha in ("aeEnNfFtTlLuUiI01579_.-+", "0123456789.eE+-_"):
        samples += ["".join(rng.choice(alpha) for _ in range(rng.randint(1, 7))) for _ in range(3000)]
    checked = 0
    for v in samples:
        if not _FAST_VALUE.fullmatch(v):
            continue
        want, got = parser.parse_override("k=" + v).value(), scalar(v)
        assert type(want) is type(got), v
        assert want == got or (isinstance(want, float) and math.isnan(want) and math.isnan(got)), v
        checked += 1
    assert checked > 2000
    (s,), _ = parse_overrides((Word("a.b=07"),))  # not plain: the grammar decides (a string, not 7)
    assert s.value == "07"


def test_stray_words_are_named_up_to_a_limit_and_the_rest_counted():
    """A line of 65,000 stray words made 65,000 notes (most of the doctor's time on its largest input)."""
    from kl_core.doctor.parse import MAX_WORD_NOTES, Word, parse_flags, parse_overrides

    words = tuple(Word(f"w{i}") for i in range(MAX_WORD_NOTES + 5))
    for settings, notes in (parse_flags(words, {}), parse_overrides(words)):
        assert settings == ()
        assert len(notes) == MAX_WORD_NOTES + 1 and str(notes[0]).startswith("w0: ")
        assert str(notes[-1]) == "and 5 more words like these"
    few = tuple(Word(f"w{i}") for i in range(MAX_WORD_NOTES))
    assert len(parse_flags(few, {})[1]) == MAX_WORD_NOTES  # no count when all are named


def test_shell_arithmetic_is_not_said_to_run_a_command():
    """code-r1's GLOBAL_BATCH_SIZE=$(($(($GPUS_PER_NODE * ...)))): the card said the arithmetic "runs a command"
    (an audit); it is arithmetic the doctor does not evaluate.  $(cat x) does run one."""
    from kl_core.doctor.diagnosis import diagnose

    d = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                 "actor_rollout_ref.actor.ppo_mini_batch_size=$((N*2)) actor_rollout_ref.actor.kl_loss_coef=$(cat x)\n")
    words = " ".join(str(w.message) for w in d.warnings if w.code == "NOT_LITERAL")
    assert "$((N*2)) is shell arithmetic, which the doctor does not evaluate" in words
    assert "$(cat x) runs a command" in words and "$((N*2)) runs a command" not in words


@pytest.mark.parametrize(("expr", "value"), [
    ("$(( nproc * nnodes * ngpu ))", 16), ("$(( total ))", 16), ("$((total/3))", 5), ("$(( (total - 20) / 3 ))", -1),
    ("$(( -7 % 3 ))", -1), ("$(( ${total} * 2 + 1 ))", 33), ("$((total))", 16),
])
def test_shell_arithmetic_over_the_scripts_own_integers_is_evaluated_as_bash_does(expr, value):
    """An audit: verl v0.5.0 examples/tuning/7b/qwen2-7b_grpo-lora_1_h100_fsdp_vllm.sh sets both batch sizes from
    total_procs=$(( nproc_per_gpu * nnodes * ngpu_per_node )); the card assumed the defaults and called the run
    off-policy.  Bash divides toward zero: (16-20)/3 is -1, -7 % 3 is -1."""
    from kl_core.doctor.diagnosis import diagnose

    script = ("nproc=16\nnnodes=1\nngpu=1\ntotal=$(( nproc * nnodes * ngpu ))\n"
              f"python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True data.train_batch_size={expr}\n")
    d = diagnose(script)
    assert d.settings["data.train_batch_size"] == value and "NOT_LITERAL" not in d.codes
    assert any(n.startswith(f"data.train_batch_size = {value}: {expr} in the script") for n in d.notes)


@pytest.mark.parametrize("expr", ["$(( unset_var * 2 ))", "$(( 2 ** 3 ))", "$(( total / 0 ))", "$(( total << 1 ))",
                                  "$(( name ))"])
def test_shell_arithmetic_the_doctor_cannot_evaluate_stays_unread(expr):
    from kl_core.doctor.diagnosis import diagnose

    script = ("total=16\nname=abc\n"
              f"python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True data.train_batch_size={expr}\n")
    assert "NOT_LITERAL" in diagnose(script).codes


def test_an_unquoted_variable_with_spaces_is_several_words_as_in_bash():
    """A script's `$ARGS` holding two overrides was read as one word: the first key took the rest as its value, and
    the KL loss the script switches on was lost without a word ("No KL term")."""
    from kl_core.doctor.diagnosis import diagnose

    script = ('ARGS="actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.3"\n'
              "EMPTY=\npython3 -m verl.trainer.main_ppo $ARGS $EMPTY\n")
    d = diagnose(script)
    assert [(u.where, u.coef) for u in d.kl_uses] == [("loss", 0.3)]
    # quoted, it stays one word, as bash keeps it
    quoted = diagnose(script.replace("$ARGS $EMPTY", '"$ARGS"'))
    assert quoted.kl_uses == () or quoted.kl_uses[0].coef != 0.3


def test_a_here_document_read_into_a_variable_is_the_command_it_holds():
    """OpenRLHF v0.5.7 examples/scripts/train_ppo_llama.sh: read -r -d '' training_commands <<EOF … EOF, then
    deepspeed --module $training_commands.  The body was skipped, so no OpenRLHF setting was found."""
    from kl_core.doctor.diagnosis import diagnose
    from kl_core.doctor.parse import UnreadableInput, _heredoc_reads

    body = ("read -r -d '' training_commands <<EOF\nopenrlhf.cli.{m} \\\n   --pretrain x \\\n   --init_kl_coef 0.02 "
            "\\\n   --use_kl_loss\nEOF\n\nif [[ ${{1}} != \"slurm\" ]]; then\n    deepspeed --module $training_commands\nfi\n")
    with pytest.raises(UnreadableInput, match="this runs openrlhf.cli.train_ppo, a trainer the doctor does not cover"):
        diagnose(body.format(m="train_ppo"))
    d = diagnose(body.format(m="train_ppo_ray"))
    assert [(u.where, u.coef) for u in d.kl_uses] == [("loss", 0.02)]
    text = body.format(m="train_ppo_ray")
    assert _heredoc_reads(text).count("\n") == text.count("\n")  # every later line keeps its number
    quoted = text.replace("<<EOF", "<<'EOF'")
    assert "training_commands='" in _heredoc_reads(quoted)


def test_a_word_hydra_cannot_parse_stops_the_run():
    r"""verl v0.4.0 examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh line 6: `reweight_method=pow \  # [...]`. The
    escaped space is a word of its own, on which Hydra's OverridesParser raises (checked below with hydra-core), and
    the comment ends the command: the card described the run with no sign that it stops."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    from kl_core.doctor.diagnosis import diagnose

    for word in (" ", "foo", "+foo"):
        with pytest.raises(OverrideParseException):
            OverridesParser.create().parse_overrides([word])
    script = ("python3 -m verl.trainer.main_ppo \\\n    algorithm.adv_estimator=gae \\\n"
              "    algorithm.pf_ppo.reweight_method=pow \\  # [\"pow\", \"max_min\"]\n"
              "    actor_rollout_ref.actor.use_kl_loss=True \\\n    actor_rollout_ref.actor.kl_loss_coef=0.01\n")
    d = diagnose(script, filename="run.sh")
    assert d.codes[0] == "SETTING_REJECTED" and "does not accept ' '" in d.warnings[0].message
    assert "never reach the trainer" in d.warnings[0].message
    assert d.settings["actor_rollout_ref.actor.use_kl_loss"] is False  # the next line is a command of its own
    stray = diagnose("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=gae foo", filename="run.sh")
    assert stray.codes[0] == "SETTING_REJECTED" and "does not accept foo" in stray.warnings[0].message
    assert "lone space" not in stray.warnings[0].message
    fine = diagnose("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=gae ~trainer.logger", filename="run.sh")
    assert "SETTING_REJECTED" not in fine.codes or "~trainer.logger" in fine.warnings[0].message


def test_a_prefix_assignment_does_not_reach_the_commands_own_words():
    """An audit: `KL_COEF=0.003 python3 … kl_loss_coef=$KL_COEF` after `KL_COEF=0.001`: bash expands $KL_COEF before
    the prefix assignment applies (to the command's environment only), so the trainer gets 0.001; the card said
    0.003.  `: "${KL_COEF:=0.002}"` sets KL_COEF for the rest of the script; the card said it was not set."""
    from kl_core.doctor.diagnosis import diagnose

    body = ("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
            "actor_rollout_ref.actor.kl_loss_coef=$KL_COEF actor_rollout_ref.actor.kl_loss_type=$KL_TYPE\n")
    d = diagnose("KL_COEF=0.001\nKL_TYPE=mse\nKL_COEF=0.003 KL_TYPE=low_var_kl " + body, filename="run.sh")
    assert [(u.estimator, u.coef) for u in d.kl_uses] == [("k2", 0.001)]
    d = diagnose(': "${KL_COEF:=0.002}"\n: ${KL_TYPE:=mse}\n' + body, filename="run.sh")
    assert [(u.estimator, u.coef) for u in d.kl_uses] == [("k2", 0.002)] and "NOT_LITERAL" not in d.codes
    d = diagnose("export KL_COEF=0.004 KL_TYPE=k2\n" + body, filename="run.sh")
    assert [(u.estimator, u.coef) for u in d.kl_uses] == [("k2", 0.004)]


def test_a_backslash_ending_the_file_is_dropped_as_bash_drops_it():
    """An audit: verl v0.7.0 recipe/dapo/test_dapo_gptoss_20b_megatron.sh ends in `"${FORWARD_ONLY_SETS[@]}" \\`
    with no newline; bash drops the backslash, and the card said Hydra would refuse the word '\\'."""
    from kl_core.doctor.diagnosis import diagnose

    d = diagnose("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\", filename="run.sh")
    assert "SETTING_REJECTED" not in d.codes
