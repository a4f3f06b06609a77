"""AppTest checks of the "Config doctor" page.

It runs and reruns cleanly; the card is :func:`kl_core.doctor.diagnosis.diagnose`'s for
each example, for typed text and for an upload; a link reproduces the example
and the library; unreadable input is one clear ``st.error``; the pull chart is
a valid, small spec.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from charts.config_doctor import FORWARD, REVERSE, pull_chart
from charts.histograms import MAX_ROWS
from i18n import _
from kl_core.doctor.diagnosis import diagnose, pull_curve
from kl_core.libraries.crosswalk import lookup
from lab.notes import config_doctor as notes

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/config-doctor.py"
FIXTURES = ROOT / "data" / "doctor_examples"


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def open_page(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update(query)
    return at.run()


def codes_shown(at: AppTest) -> list[str]:
    """The warning codes, shown small beside each warning's plain title."""
    return [m.value.split(":small[`")[1].split("`")[0] for m in at.markdown
            if m.value.startswith(":material/warning: **")]


def check_card(at: AppTest, d) -> None:
    assert not at.exception and not at.error
    assert at.header[0].value == notes.headline(d)
    assert [s.value for s in at.subheader][: len(d.kl_uses)] == [notes.use_title(d, u) for u in d.kl_uses]
    assert codes_shown(at) == d.codes
    text = "\n".join(m.value for m in at.markdown)
    for u in d.kl_uses:
        for fact in notes.use_facts(d, u):
            assert fact in text
    assert len(at.get("vega_lite_chart")) == len(d.kl_uses)


@pytest.mark.parametrize("ex", ["verl", "openrlhf", "trl"])
def test_each_example_shows_the_cores_card(ex):
    example = notes.EXAMPLES[ex]
    at = open_page() if ex == "verl" else open_page(ex=example.label)
    assert at.title[0].value == "Config doctor"
    d = diagnose(notes.example_text(ex), filename=example.file)
    check_card(at, d)
    shown = [c.value for c in at.code]
    for w in d.warnings:
        if w.fix:
            assert w.fix in shown


def test_the_verdict_comes_first_with_each_fix_once():
    at = open_page()
    d = diagnose(notes.example_text("verl"))
    summary = notes.summary_lines(d)[0]
    markdown = [m.value for m in at.markdown]
    assert summary in markdown
    first_fix = next(c.value for c in at.code if c.language == "bash")
    assert first_fix == notes.fix_groups(d)[0][0]
    assert markdown.index(summary) < next(i for i, m in enumerate(markdown) if m.startswith(":material/warning:"))


def test_typed_text_the_library_override_and_a_bad_link():
    at = open_page(ex="Your own")
    assert not at.exception
    assert any("Paste a launch script" in i.value for i in at.info)
    text = "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=kl"
    at.text_area(key="cfg_own").set_value(text).run()
    check_card(at, diagnose(text))
    assert codes_shown(at)[0] == "ZERO_GRAD_LOSS"
    assert any("never what you paste" in c.value for c in at.caption)

    forced = open_page(library="TRL")
    assert not forced.exception and forced.header[0].value.startswith("TRL 1.16.0")
    assert any(t.value.startswith("Keys TRL 1.16.0 does not know") for t in forced.subheader)

    bad = open_page(ex="nope")
    assert not bad.exception
    assert any("`ex=nope`" in w.value for w in bad.warning)
    assert bad.header[0].value == "verl 0.9.1: one KL term, in the loss"


@pytest.mark.parametrize(
    ("text", "match"),
    [("beta: !!python/object/apply:os.system ['echo pwned']\n", "YAML tag !!python/object/apply:os.system"),
     ("echo hello\n", "cannot tell which library"),
     ("GRPOConfig(beta=\n", "does not parse")],
)
def test_unreadable_text_is_one_clear_error(text, match):
    at = open_page(ex="Your own")
    at.text_area(key="cfg_own").set_value(text).run()
    assert not at.exception
    (err,) = at.error
    assert err.value.startswith("**The doctor can't read this.**") and match in err.value
    assert "--" not in err.value and "pass " not in err.value  # a web page: its controls, no command-line flag


def test_edited_example_text_becomes_your_own_and_names_no_file_or_flag():
    at = open_page()  # verl, the default example
    at.text_area(key="cfg_verl").set_value("echo hello\n").run()
    assert not at.exception
    assert at.query_params["ex"] in ("Your own", ["Your own"])  # the selector follows the box, and the link with it
    assert at.text_area(key="cfg_own").value == "echo hello\n"
    (err,) = at.error
    assert "**Library**" in err.value and "--library" not in err.value
    assert notes.EXAMPLES["verl"].file not in err.value
    # the link carries ?release= too, not only the example and the library
    assert any("a link only carries the example, the library and the release, never what you paste" in c.value
               for c in at.caption)
    picked = open_page(ex="OpenRLHF")  # picking an example fills the box with it
    assert picked.text_area(key="cfg_openrlhf").value == notes.example_text("openrlhf")


def test_fixes_and_code_wrap_and_each_fix_states_its_cost():
    at = open_page()
    d = diagnose(notes.example_text("verl"))
    ours = {w.fix for w in d.warnings if w.fix} | {u.entry.library_formula.strip("\n") for u in d.kl_uses}
    shown = [c for c in at.code if c.value in ours]  # the fixes and the library's code (not the page's source)
    assert len(shown) >= len(ours) and all(c.proto.wrap_lines for c in shown)
    captions = [c.value for c in at.caption]
    for fix, codes in notes.fix_groups(d):
        assert notes.fix_heading(codes) in [m.value for m in at.markdown]
        assert notes.fix_group_cost(d, fix) in captions
    for w in d.warnings:
        if w.fix:
            assert notes.fix_cost(d, w) in captions


def test_an_upload_takes_the_place_of_the_text():
    at = open_page()
    assert at.file_uploader[0].proto.max_upload_size_mb == 1  # not the app's 50 MB: the doctor reads 256 KiB
    assert at.file_uploader[0].proto.label == notes.upload_label()  # the limit formatted from MAX_BYTES
    data = (FIXTURES / "trl_rloo_config.yaml").read_bytes()
    at.file_uploader[0].set_value(("rloo_config.yaml", data, "application/x-yaml"))
    at.run()
    check_card(at, diagnose(data, filename="rloo_config.yaml"))
    assert at.header[0].value == "TRL 1.16.0: one KL term, in the reward"
    assert any("a link can't carry it" in c.value for c in at.caption)
    at.file_uploader[0].set_value(("weights.bin", b"\x00\x01\x02" * 100, "application/octet-stream"))
    at.run()
    assert not at.exception and "“weights.bin”: the input looks like a binary file" in at.error[0].value
    at.file_uploader[0].set_value(("config.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"))
    at.run()
    assert "“config.yaml”: the input is not text: it looks like a PNG image" in at.error[0].value
    at.file_uploader[0].set_value(("big.yaml", b"a: 1\n" * 61_440, "application/x-yaml"))
    at.run()
    assert "“big.yaml”: the input is 300 KiB; the doctor reads at most 256 KiB" in at.error[0].value


def test_the_json_download_and_the_crosswalk_link():
    at = open_page(ex="OpenRLHF")
    d = diagnose(notes.example_text("openrlhf"))
    (dl,) = [b for b in at.get("download_button") if b.proto.label == "Download the card (JSON)"]
    assert json.loads(notes.card_json(d))["kl_uses"][0]["gradient_target"] == "forward_kl"
    (link,) = [p for p in at.get("page_link") if "crosswalk" in p.proto.label]
    assert link.proto.page == "approx-kl" and link.proto.query_string == "lib=OpenRLHF&opt=k3+%28loss%29"


def test_the_crosswalk_link_opens_that_row_on_the_approx_kl_page():
    d = diagnose(notes.example_text("verl"))
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/approx-kl.py")
    at.query_params.update(notes.crosswalk_query(d.kl_uses[0]))
    at.run()
    assert not at.exception
    assert at.selectbox(key="opt").value == "verl:low_var_kl:loss"
    assert not [w.value for w in at.warning if "This link also set" in w.value]  # the page reads it whole


@pytest.mark.parametrize("example", ["verl", "openrlhf", "trl"])
def test_the_gradients_link_is_read_whole(example):
    (query,) = [q for u in diagnose(notes.example_text(example)).kl_uses[:1]
                if (q := notes.gradients_query(u)) is not None]
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/gradients.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception
    assert not [w.value for w in at.warning if "This link also set" in w.value or "The link set" in w.value]


# ------------------------------------------------------------------ the chart builder
@pytest.mark.parametrize(("library", "option", "acts_on"), [("verl", "low_var_kl", "loss"), ("OpenRLHF", "k3", "reward"),
                                                           ("TRL", "use_bias_correction_kl", "loss"), ("TRL", "full", "reward")])
def test_pull_chart_is_a_valid_small_spec(library, option, acts_on):
    entry = lookup(library, option, acts_on=acts_on)
    curve = pull_curve(entry)
    spec = pull_chart(curve, estimator_key=entry.estimator, option_label=option).to_dict()  # validates
    rows = spec["datasets"]["pull"]
    assert len(rows) == 3 * curve.t.size <= MAX_ROWS
    assert {r["series"] for r in rows} == {_(REVERSE), _(FORWARD), option}
    mine = np.array([r["pull"] for r in rows if r["series"] == option])
    np.testing.assert_array_equal(mine, curve.option)


def test_the_pull_chart_adds_the_unclamped_line_only_when_asked_and_only_for_a_clamped_row():
    entry = lookup("OpenRLHF", "k3", acts_on="loss")
    curve = pull_curve(entry)
    label = "k3 (loss) before 0.8.6: no clamp"
    rows = pull_chart(curve, estimator_key="k3", option_label="k3 (loss)", unclamped_label=label).to_dict()
    rows = rows["datasets"]["pull"]
    assert len(rows) == 4 * curve.t.size <= MAX_ROWS
    bare = np.array([r["pull"] for r in rows if r["series"] == label])
    np.testing.assert_array_equal(bare, curve.unclamped)
    np.testing.assert_allclose(bare, -np.expm1(curve.t), rtol=1e-12, atol=1e-12)  # k3 as a loss, unclamped
    assert not np.allclose(curve.option, curve.unclamped)  # the clamp bites on the chart's range
    plain = lookup("TRL", "use_bias_correction_kl", acts_on="loss")
    assert pull_curve(plain).unclamped is None
    spec = pull_chart(pull_curve(plain), estimator_key="k3", option_label="x", unclamped_label=label).to_dict()
    assert len(spec["datasets"]["pull"]) == 3 * curve.t.size


def test_the_release_is_inferred_shown_and_can_be_chosen():
    script = (ROOT / "tests" / "doctor" / "real_scripts" / "openrlhf"
              / "v0.7.5_train_grpo_ray_hybrid_engine.sh").read_text()
    at = open_page(ex="Your own")
    at.text_area(key="cfg_own").set_value(script).run()
    d = diagnose(script)
    check_card(at, d)
    assert at.header[0].value == "OpenRLHF 0.6.0.post1–0.10.1: one KL term, in the loss"
    assert notes.release_line(d) in [m.value for m in at.markdown]
    (other,) = [w for w in at.warning if "Under OpenRLHF 0.11.2" in w.value]
    assert "stops before training" in other.value and "What changed" in other.value

    latest = open_page(ex="Your own", release="Latest")
    latest.text_area(key="cfg_own").set_value(script).run()
    assert not latest.exception and latest.header[0].value.startswith("OpenRLHF 0.11.2")

    wrong = open_page(ex="Your own", release=notes.RELEASES["verl-0.3"])
    wrong.text_area(key="cfg_own").set_value(script).run()
    assert not wrong.exception
    (err,) = wrong.error
    assert "**verl 0.2–0.3.0.post1 is not a release of OpenRLHF, this text's library.**" in err.value
    assert "Choose Infer, Latest or one of OpenRLHF 0.5.9–0.6.0, OpenRLHF 0.6.0.post1–0.10.1, OpenRLHF 0.10.2–0.11.1." in err.value  # its trainer's eras

    # issue: the same library, another trainer (TRL's GRPO era for an RLOO config) was "not a release of this
    # text's library"; it is TRL's, and it covers GRPO, not RLOO
    rloo = open_page(ex="Your own", release=notes.RELEASES["trl-grpo-0.18"])
    rloo.text_area(key="cfg_own").set_value((FIXTURES / "trl_rloo_config.yaml").read_text()).run()
    assert not rloo.exception
    (err,) = rloo.error
    assert "not a release of" not in err.value
    assert err.value.endswith("**TRL 0.17.0–0.18.2 covers TRL's `grpo` trainer, and this text is for its `rloo` "
                              "trainer.** Choose Infer, Latest or TRL 0.10.1–0.21.0 (rloo).")


@pytest.mark.parametrize("coef", ["nan", "inf"])
def test_a_coefficient_that_is_not_finite_gets_a_card_not_a_crash(coef):
    """fix_cost had no sentence for NONFINITE_COEF: the page raised for kl_loss_coef=nan."""
    at = open_page(ex="Your own")
    text = ("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
            f"actor_rollout_ref.actor.kl_loss_coef={coef}")
    at.text_area(key="cfg_own").set_value(text).run()
    assert not at.exception
    check_card(at, diagnose(text))
    assert codes_shown(at)[0] == "NONFINITE_COEF"


def test_a_run_the_release_refuses_is_headlined_as_stopping_not_training():
    """A misspelt key stops a verl run (Hydra: "Could not override"): the page must not headline the KL terms of
    a run that trains."""
    at = open_page(ex="Your own")
    text = ("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
            "actor_rollout_ref.actor.kl_los_coef=0.3")
    at.text_area(key="cfg_own").set_value(text).run()
    d = diagnose(text)
    check_card(at, d)
    assert codes_shown(at)[0] == "SETTING_REJECTED"
    assert "stops before training" in at.header[0].value and "KL term" not in at.header[0].value
    verdict = "\n".join(m.value for m in at.markdown)
    assert verdict.index("**The run stops before training:**") < verdict.index("**In the loss:**")
    assert "actor_rollout_ref.actor.kl_loss_coef=0.3" in [c.value for c in at.code]
