"""The conformance session's judge (tests/conformance/run.py), without the harness.

``nox -s conformance`` runs the official harness; these tests check, with
the harness's recorded checks written by hand, that the judge fails what it
must: a missing SUCCESS, any FAILURE or WARNING, a client that exited badly
or never ran, a scenario the table does not know.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFORMANCE = Path(__file__).parent / "conformance"


def _load_runner():
    spec = importlib.util.spec_from_file_location("conformance_run", CONFORMANCE / "run.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


run = _load_runner()

ALPHA = "0.2.0-alpha.12"


def check(check_id, status="SUCCESS", name=None):
    return {"id": check_id, "name": name or check_id, "status": status}


def expected(checks=("a", "b"), extra=None, exit_status=0):
    return run.Expected("s", ("leg",), tuple(checks), dict(extra or {}), exit_status)


def test_the_table_of_the_session_is_valid():
    table = run.load_table(CONFORMANCE / "scenarios.toml")
    assert {leg.harness for leg in table.legs.values()} == set(run.HARNESSES)
    assert table.scenarios
    for name in table.scenarios:
        # A judged scenario must never be excused by a not_judged pattern too.
        assert table.why_not_judged(name) is None, name
    assert table.why_not_judged("sep-2640-client-no-prefetch") is not None
    # The authorization flows are judged.
    assert "auth/metadata-default" in table.scenarios


def test_a_scenario_passes_with_every_check_a_success_and_exit_0():
    assert run.judge(expected(), ALPHA, [check("a"), check("b"), check("x", "INFO")], [0]) == []


def test_info_and_skipped_checks_do_not_fail_a_scenario():
    checks = [check("a"), check("b"), check("c", "INFO"), check("d", "SKIPPED")]
    assert run.judge(expected(), ALPHA, checks, [0]) == []


def test_a_missing_success_fails():
    problems = run.judge(expected(), ALPHA, [check("a")], [0])
    assert problems == ["no SUCCESS for b (not recorded)"]


def test_a_check_seen_only_as_skipped_is_not_a_success():
    problems = run.judge(expected(), ALPHA, [check("a"), check("b", "SKIPPED")], [0])
    assert problems == ["no SUCCESS for b (seen: SKIPPED)"]


@pytest.mark.parametrize("status", ["FAILURE", "WARNING"])
def test_any_failure_or_warning_fails_even_beside_a_success(status):
    problems = run.judge(expected(), ALPHA, [check("a"), check("b"), check("b", status)], [0])
    assert len(problems) == 1
    assert problems[0].startswith(f"{status} b ")


@pytest.mark.parametrize(
    ("exits", "message"), [([1], "exited with 1"), ([], "not recorded"), (None, "not recorded")]
)
def test_the_client_must_exit_0(exits, message):
    problems = run.judge(expected(), ALPHA, [check("a"), check("b")], exits)
    assert len(problems) == 1
    assert message in problems[0]


def test_two_runs_of_the_client_in_one_scenario_fail():
    problems = run.judge(expected(), ALPHA, [check("a"), check("b")], [0, 0])
    assert problems == ["the client exited with 0, 0, not 0"]


def test_an_entry_may_expect_another_exit_status():
    assert run.judge(expected(exit_status=1), ALPHA, [check("a"), check("b")], [1]) == []


def test_a_scenario_without_results_fails():
    assert run.judge(expected(), ALPHA, None, [0]) == [
        "no results: the harness did not run it, or recorded nothing"
    ]


def test_a_check_named_by_id_and_name_needs_that_very_check():
    entry = expected(checks=("h#Tools",))
    assert run.judge(entry, ALPHA, [check("h", name="Tools")], [0]) == []
    problems = run.judge(entry, ALPHA, [check("h", name="Prompts")], [0])
    assert problems == ["no SUCCESS for h#Tools (seen: SUCCESS)"]


def test_extra_checks_apply_to_their_harness_version_only():
    entry = expected(checks=("a",), extra={ALPHA: ("wire-schema-valid",)})
    assert run.judge(entry, "0.1.16", [check("a")], [0]) == []
    assert run.judge(entry, ALPHA, [check("a")], [0]) == ["no SUCCESS for wire-schema-valid (not recorded)"]


def _table(**scenarios):
    return run.parse_table(
        {
            "legs": {"leg": {"harness": ALPHA}, "other": {"harness": "0.1.16"}},
            "not_judged": {"auth/*": "later"},
            "scenarios": scenarios or {"s": {"legs": ["leg"], "checks": ["a"]}},
        }
    )


def test_a_leg_fails_a_scenario_it_does_not_know_and_excuses_the_not_judged():
    table = _table(s={"legs": ["leg"], "checks": ["a"]}, t={"legs": ["other"], "checks": ["a"]})
    results = {"s": [check("a")], "auth/x": [check("z", "FAILURE")], "new": [check("a")], "t": [check("a")]}
    report = run.judge_leg(table, table.legs["leg"], results, {"s": [0], "new": [0]})
    assert report.passed == ["s"]
    assert report.not_judged == {"auth/x": "later"}
    assert report.unknown == ["new", "t (in the table, but not for this leg)"]
    assert report.failed == {}


def test_a_leg_fails_a_judged_scenario_that_did_not_run():
    table = _table()
    report = run.judge_leg(table, table.legs["leg"], {}, {})
    assert list(report.failed) == ["s"]


@pytest.mark.parametrize(
    ("scenario", "error"),
    [
        ({"legs": ["nowhere"], "checks": ["a"]}, "no leg 'nowhere'"),
        ({"legs": ["leg"], "checks": []}, "non-empty strings"),
        ({"legs": ["leg"]}, "non-empty strings"),
        ({"legs": ["leg"], "checks": ["a"], "chekcs": ["b"]}, "unknown keys"),
        ({"legs": ["leg"], "checks": ["a"], "extra": {"9.9": ["b"]}}, "unknown harness"),
    ],
)
def test_a_bad_table_entry_is_refused_by_name(scenario, error):
    with pytest.raises(ValueError, match=error):
        _table(s=scenario)


def test_results_are_found_by_scenario_nested_ones_too(tmp_path):
    for folder in ("tools_call-2026-12-01T23-15-15-812Z", "auth/metadata-default-2026-12-01T23-15-15-812Z"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "checks.json").write_text(json.dumps([check("a")]))
    assert run.read_results(tmp_path) == {"tools_call": [check("a")], "auth/metadata-default": [check("a")]}


def _wrap(tmp_path, scenario, *command):
    env = {**os.environ, "MCP_CONFORMANCE_SCENARIO": scenario}
    return subprocess.run(
        ["sh", str(CONFORMANCE / "exit_status.sh"), str(tmp_path), *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_wrapper_records_a_judged_scenarios_exit_status(tmp_path):
    (tmp_path / "judged.txt").write_text("tools_call\nsse-retry\n")
    done = _wrap(
        tmp_path, "sse-retry", sys.executable, "-c", "import sys; print(sys.argv[-1]); sys.exit(7)", "URL"
    )
    assert done.returncode == 7
    assert done.stdout == "URL\n"
    assert run.read_exits(tmp_path) == {"sse-retry": [7]}


def test_the_wrapper_does_not_start_the_client_of_a_scenario_not_judged(tmp_path):
    (tmp_path / "judged.txt").write_text("tools_call\n")
    marker = tmp_path / "ran"
    done = _wrap(tmp_path, "tools_cal", sys.executable, "-c", f"open({str(marker)!r}, 'w')", "URL")
    assert done.returncode == 3
    assert not marker.exists()
    assert run.read_exits(tmp_path) == {}


def _known_table(known):
    return _table(s={"legs": ["leg", "other"], "checks": ["a"], "known_failures": known})


def test_a_known_failure_is_reported_and_does_not_fail_the_leg():
    table = _known_table({"leg": "defect 3f"})
    report = run.judge_leg(table, table.legs["leg"], {"s": [check("a", "WARNING")]}, {"s": [0]})
    assert list(report.known) == ["s"]
    assert report.known["s"][0].reason == "defect 3f"
    assert report.ok
    # Only in its own leg.
    report = run.judge_leg(table, table.legs["other"], {"s": [check("a", "WARNING")]}, {"s": [0]})
    assert list(report.failed) == ["s"]
    assert not report.ok


def test_a_strict_known_failure_that_passes_fails_the_leg():
    table = _known_table({"leg": "defect 3f"})
    report = run.judge_leg(table, table.legs["leg"], {"s": [check("a")]}, {"s": [0]})
    assert report.stale == ["s"]
    assert not report.ok


def test_a_known_failure_that_is_not_strict_may_pass():
    table = _known_table({"leg": {"reason": "fails in some runs", "strict": False}})
    report = run.judge_leg(table, table.legs["leg"], {"s": [check("a")]}, {"s": [0]})
    assert report.passed == ["s"]
    assert report.ok


@pytest.mark.parametrize(
    ("known", "error"),
    [
        ({"nowhere": "x"}, "not judged in that leg"),
        ({"leg": ""}, "expected a reason"),
        ({"leg": {"reason": "x", "strict": "no"}}, "expected a reason"),
        ({"leg": {"reason": "x", "strickt": False}}, "expected a reason"),
    ],
)
def test_a_bad_known_failure_is_refused(known, error):
    with pytest.raises(ValueError, match=error):
        _known_table(known)


def test_the_run_passes_only_when_every_leg_is_as_the_table_says():
    table = _known_table({"leg": "defect 3f"})
    known = run.judge_leg(table, table.legs["leg"], {"s": [check("a", "FAILURE")]}, {"s": [0]})
    passed = run.judge_leg(table, table.legs["other"], {"s": [check("a")]}, {"s": [0]})
    assert run.verdict([known, passed]) == 0
    failed = run.judge_leg(table, table.legs["other"], {"s": [check("a", "FAILURE")]}, {"s": [0]})
    assert run.verdict([known, failed]) == 1
    stale = run.judge_leg(table, table.legs["leg"], {"s": [check("a")]}, {"s": [0]})
    assert run.verdict([stale, passed]) == 1
    unclean = run.judge_leg(table, table.legs["other"], {"s": [check("a")]}, {"s": [0]})
    unclean.clean = False
    assert run.verdict([unclean]) == 1
    unknown = run.judge_leg(table, table.legs["other"], {"s": [check("a")], "new": []}, {"s": [0]})
    assert run.verdict([unknown]) == 1


def test_a_run_may_judge_only_some_scenarios():
    table = _table(s={"legs": ["leg"], "checks": ["a"]}, t={"legs": ["leg"], "checks": ["a"]}).only(["s*"])
    report = run.judge_leg(table, table.legs["leg"], {"s": [check("a")], "t": [], "auth/x": []}, {"s": [0]})
    assert report.passed == ["s"]
    assert report.not_judged == {"t": "not selected in this run (--scenario)", "auth/x": "later"}
    assert report.ok
