"""Run the official MCP conformance harness against trio_mcp, and judge the results.

``nox -s conformance`` runs this. It installs ``@modelcontextprotocol/conformance``
(two pinned versions, side by side) into a project folder with npm, runs each
leg of scenarios.toml (one harness version over its whole client suite, with
the harness's own parallelism) with client.py as the client under test, and
judges every scenario by the table in scenarios.toml: the named SUCCESS checks,
no FAILURE or WARNING, and the client's exit status. It exits 1 if any judged
scenario fails (other than as a known failure of the table says), if a
judged scenario did not run, if a strict known failure passes, or if the
harness ran a scenario the table does not know.

    python tests/conformance/run.py [--leg NAME]... [--self-test] [--dest DIR]

``--self-test`` runs a client that does nothing instead, and exits 1 unless
every judged scenario fails with it: the table's checks are not vacuous.

Standard library only (tomllib: Python 3.11). Needs Node.js 20 or later and npm.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FORMAT = 1  # bump to force a reinstall when the layout changes

# ------------------------------------------------------------------ install

#: The harness versions, each under an npm alias of its own so that both live
#: in one node_modules.
HARNESSES = {
    "0.1.16": "@modelcontextprotocol/conformance",
    "0.2.0-alpha.12": "@modelcontextprotocol/conformance-alpha",
}
PACKAGE = "@modelcontextprotocol/conformance"
#: The harness's own dependencies float (e.g. the TypeScript SDK at ^1.27.1):
#: resolve them as of a fixed date, and pin the SDK its mock servers run on.
NPM_BEFORE = "2026-12-01T00:00:00Z"
OVERRIDES = {"@modelcontextprotocol/sdk": "1.32.2"}
#: For the Node 20 shim (node20/fs-shim.mjs).
SHIM_PACKAGES = {"tinyglobby": "0.2.17"}
NPM_ARGS = [
    "install",
    "--no-audit",
    "--no-fund",
    "--omit=dev",
    "--ignore-scripts",
    "--loglevel=error",
    f"--before={NPM_BEFORE}",
]
SHIM_FILES = ("fs-shim.mjs", "node20-hooks.mjs", "node20.mjs")
#: The most one leg may take, whatever the harness does.
LEG_TIMEOUT = 600


def log(message: str) -> None:
    print(f"[conformance] {message}", file=sys.stderr, flush=True)


def package_json() -> str:
    dependencies = {alias: f"npm:{PACKAGE}@{version}" for version, alias in HARNESSES.items()}
    dependencies.update(SHIM_PACKAGES)
    return json.dumps(
        {
            "name": "trio-mcp-conformance",
            "version": "0.0.0",
            "private": True,
            "dependencies": dependencies,
            "overrides": OVERRIDES,
        },
        indent=2,
    )


def install(dest: Path) -> None:
    """Install the harnesses into DEST, unless the install there is current."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise SystemExit("the conformance harness needs Node.js (node and npm on PATH)")
    major = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout
    shims = [(HERE / "node20" / name).read_text() for name in SHIM_FILES]
    stamp = hashlib.sha256(
        json.dumps([FORMAT, package_json(), NPM_ARGS, major.strip().split(".")[0], shims]).encode()
    ).hexdigest()
    stamp_file = dest / ".stamp"
    if stamp_file.exists() and stamp_file.read_text() == stamp:
        log(f"harness: up to date in {dest}")
        return
    log(f"harness: installing into {dest}")
    started = time.monotonic()
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    (dest / "package.json").write_text(package_json() + "\n")
    for name in SHIM_FILES:
        shutil.copyfile(HERE / "node20" / name, dest / name)
    subprocess.run([npm, *NPM_ARGS], cwd=dest, check=True)
    for version, alias in HARNESSES.items():
        installed = json.loads((dest / "node_modules" / alias / "package.json").read_text())["version"]
        if installed != version:
            raise SystemExit(f"npm installed {PACKAGE} {installed} as {alias}, not {version}")
    for name, version in OVERRIDES.items():
        installed = json.loads((dest / "node_modules" / name / "package.json").read_text())["version"]
        if installed != version:
            raise SystemExit(f"npm installed {name} {installed}, not {version}")
    stamp_file.write_text(stamp)
    log(f"harness: installed in {time.monotonic() - started:.1f} s")


def harness_command(dest: Path, version: str) -> list[str]:
    node = shutil.which("node") or "node"
    entry = dest / "node_modules" / HARNESSES[version] / "dist" / "index.js"
    return [node, "--import", (dest / "node20.mjs").as_uri(), str(entry)]


# ------------------------------------------------------------------ the table


@dataclass(frozen=True)
class Leg:
    name: str
    harness: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class KnownFailure:
    """A defect of ours that a scenario shows in one leg, until it is fixed."""

    reason: str
    #: Strict: the run fails when the scenario passes after all (the entry is stale).
    strict: bool = True


@dataclass(frozen=True)
class Expected:
    """What one scenario must show in the legs it is judged in."""

    scenario: str
    legs: tuple[str, ...]
    checks: tuple[str, ...]
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exit: int = 0
    known_failures: dict[str, KnownFailure] = field(default_factory=dict)

    def checks_for(self, harness: str) -> tuple[str, ...]:
        return self.checks + self.extra.get(harness, ())


@dataclass(frozen=True)
class Table:
    legs: dict[str, Leg]
    scenarios: dict[str, Expected]
    not_judged: dict[str, str]

    def expected(self, leg: str) -> dict[str, Expected]:
        return {name: entry for name, entry in self.scenarios.items() if leg in entry.legs}

    def only(self, patterns: list[str]) -> Table:
        """This table judging only the scenarios that match one of ``patterns`` (globs)."""
        scenarios = {
            name: entry
            for name, entry in self.scenarios.items()
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
        }
        return Table(self.legs, scenarios, {**self.not_judged, "*": "not selected in this run (--scenario)"})

    def why_not_judged(self, scenario: str) -> str | None:
        for pattern, reason in self.not_judged.items():
            if fnmatch.fnmatchcase(scenario, pattern):
                return reason
        return None


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ValueError(f"{where}: expected a list of non-empty strings, got {value!r}")
    return tuple(value)


def parse_table(data: dict[str, Any]) -> Table:
    """Build the table from scenarios.toml's data; a ValueError names what is wrong."""
    legs: dict[str, Leg] = {}
    for name, leg in data.get("legs", {}).items():
        harness = leg.get("harness")
        if harness not in HARNESSES:
            raise ValueError(f"legs.{name}: harness {harness!r} is not one of {sorted(HARNESSES)}")
        legs[name] = Leg(name, harness, tuple(leg.get("args", ())))
    if not legs:
        raise ValueError("no legs")
    scenarios: dict[str, Expected] = {}
    for name, entry in data.get("scenarios", {}).items():
        unknown = set(entry) - {"legs", "checks", "extra", "exit", "known_failures"}
        if unknown:
            raise ValueError(f"scenarios.{name}: unknown keys {sorted(unknown)}")
        scenario_legs = _strings(entry.get("legs"), f"scenarios.{name}.legs")
        for leg_name in scenario_legs:
            if leg_name not in legs:
                raise ValueError(f"scenarios.{name}: no leg {leg_name!r}")
        extra = {
            harness: _strings(checks, f"scenarios.{name}.extra.{harness}")
            for harness, checks in entry.get("extra", {}).items()
        }
        for harness in extra:
            if harness not in HARNESSES:
                raise ValueError(f"scenarios.{name}.extra: unknown harness {harness!r}")
        exit_status = entry.get("exit", 0)
        if not isinstance(exit_status, int):
            raise ValueError(f"scenarios.{name}.exit: expected an integer")
        checks = _strings(entry.get("checks"), f"scenarios.{name}.checks")
        if not checks:
            # A scenario passed on its exit status alone would pass a client that does nothing.
            raise ValueError(f"scenarios.{name}.checks: expected a list of non-empty strings, got []")
        known: dict[str, KnownFailure] = {}
        for leg_name, known_failure in entry.get("known_failures", {}).items():
            where = f"scenarios.{name}.known_failures.{leg_name}"
            if leg_name not in scenario_legs:
                raise ValueError(f"{where}: the scenario is not judged in that leg")
            if isinstance(known_failure, str):
                known_failure = {"reason": known_failure}
            if not isinstance(known_failure, dict) or set(known_failure) - {"reason", "strict"}:
                raise ValueError(f"{where}: expected a reason, or {{reason = ..., strict = false}}")
            reason, strict = known_failure.get("reason"), known_failure.get("strict", True)
            if not isinstance(reason, str) or not reason or not isinstance(strict, bool):
                raise ValueError(f"{where}: expected a reason, or {{reason = ..., strict = false}}")
            known[leg_name] = KnownFailure(reason, strict)
        scenarios[name] = Expected(name, scenario_legs, checks, extra, exit_status, known)
    not_judged = data.get("not_judged", {})
    if not all(isinstance(reason, str) and reason for reason in not_judged.values()):
        raise ValueError("not_judged: every pattern needs a reason")
    return Table(legs, scenarios, dict(not_judged))


def load_table(path: Path) -> Table:
    with path.open("rb") as f:
        return parse_table(tomllib.load(f))


# ------------------------------------------------------------------ judging

#: The harness names each scenario's results folder <scenario>-<timestamp>.
_RESULT_DIR = re.compile(r"^(?P<scenario>.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d+Z$")


def read_results(out_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Each scenario's recorded checks, from the harness's output folder."""
    results: dict[str, list[dict[str, Any]]] = {}
    for checks_file in sorted(out_dir.rglob("checks.json")):
        relative = checks_file.parent.relative_to(out_dir).as_posix()
        match = _RESULT_DIR.match(relative)
        if match is None:
            continue
        results[match["scenario"]] = json.loads(checks_file.read_text())
    return results


def read_exits(exit_dir: Path) -> dict[str, list[int]]:
    """Each scenario's client exit statuses, as exit_status.sh recorded them."""
    exits: dict[str, list[int]] = {}
    for record_file in sorted(exit_dir.glob("exit.*")):
        for line in record_file.read_text().splitlines():
            status, _, scenario = line.partition("\t")
            exits.setdefault(scenario, []).append(int(status))
    return exits


def judge(
    expected: Expected, harness: str, checks: list[dict[str, Any]] | None, exits: list[int] | None
) -> list[str]:
    """What is wrong with one scenario's run; an empty list means it passed."""
    if checks is None:
        return ["no results: the harness did not run it, or recorded nothing"]
    problems = []
    if not exits:
        problems.append("the client's exit status was not recorded (was it run?)")
    elif exits != [expected.exit]:
        problems.append(f"the client exited with {', '.join(map(str, exits))}, not {expected.exit}")
    for wanted in expected.checks_for(harness):
        check_id, _, name = wanted.partition("#")
        if not any(
            check.get("id") == check_id
            and check.get("status") == "SUCCESS"
            and (not name or check.get("name") == name)
            for check in checks
        ):
            seen = sorted({check.get("status", "?") for check in checks if check.get("id") == check_id})
            problems.append(
                f"no SUCCESS for {wanted} ({'seen: ' + ', '.join(seen) if seen else 'not recorded'})"
            )
    for check in checks:
        if check.get("status") in ("FAILURE", "WARNING"):
            message = check.get("errorMessage") or check.get("description") or ""
            problems.append(f"{check.get('status')} {check.get('id')} ({check.get('name')}): {message}")
    return problems


@dataclass
class LegReport:
    leg: Leg
    passed: list[str] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)
    #: Failed as a known failure of the table says they may.
    known: dict[str, tuple[KnownFailure, list[str]]] = field(default_factory=dict)
    #: Passed although a strict known failure says they fail: the entry is stale.
    stale: list[str] = field(default_factory=list)
    not_judged: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    seconds: float = 0.0
    clean: bool = True

    @property
    def judged(self) -> int:
        return len(self.passed) + len(self.failed) + len(self.known) + len(self.stale)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.stale and not self.unknown and self.clean


def judge_leg(
    table: Table, leg: Leg, results: dict[str, list[dict[str, Any]]], exits: dict[str, list[int]]
) -> LegReport:
    report = LegReport(leg)
    expected = table.expected(leg.name)
    for scenario in sorted(set(results) | set(expected)):
        entry = expected.get(scenario)
        if entry is None:
            if scenario in table.scenarios:
                report.unknown.append(f"{scenario} (in the table, but not for this leg)")
            elif (reason := table.why_not_judged(scenario)) is not None:
                report.not_judged[scenario] = reason
            else:
                report.unknown.append(scenario)
            continue
        problems = judge(entry, leg.harness, results.get(scenario), exits.get(scenario))
        known = entry.known_failures.get(leg.name)
        if problems and known is not None:
            report.known[scenario] = (known, problems)
        elif problems:
            report.failed[scenario] = problems
        elif known is not None and known.strict:
            report.stale.append(scenario)
        else:
            report.passed.append(scenario)
    return report


# ------------------------------------------------------------------ running


def run_leg(
    dest: Path, leg: Leg, judged: list[str], client: str, work: Path, timeout_ms: int
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[int]], float, bool]:
    """Run one leg; return the results, the exit statuses, the time taken, and whether it was clean.

    Not clean: the harness overran, or left processes behind (a client that
    outlived the harness's timeout, say); both are killed.
    """
    out_dir, exit_dir = work / "results", work / "exits"
    shutil.rmtree(work, ignore_errors=True)
    exit_dir.mkdir(parents=True)
    (exit_dir / "judged.txt").write_text("".join(f"{name}\n" for name in judged))
    # The harness splits --command on spaces, appends the URL, and runs it through
    # /bin/sh: every word is quoted for the shell.
    command = " ".join([shlex.quote(str(HERE / "exit_status.sh")), shlex.quote(str(exit_dir)), client])
    argv = [
        *harness_command(dest, leg.harness),
        "client",
        "--command",
        command,
        "--suite",
        "all",
        "--timeout",
        str(timeout_ms),
        "-o",
        str(out_dir),
        *leg.args,
    ]
    started = time.monotonic()
    with (work / "harness.log").open("w") as harness_log:
        # Its own process group, so that whatever it leaves behind can be ended.
        harness = subprocess.Popen(
            argv, stdout=harness_log, stderr=subprocess.STDOUT, cwd=work, start_new_session=True
        )
        try:
            # Its exit status says nothing we use: it fails on the scenarios not judged.
            harness.wait(timeout=LEG_TIMEOUT)
            overran = False
        except subprocess.TimeoutExpired:
            overran = True
        try:
            os.killpg(harness.pid, signal.SIGKILL)
            leftovers = True
        except ProcessLookupError:
            leftovers = False
        harness.wait()
    if overran:
        log(f"leg {leg.name}: the harness overran {LEG_TIMEOUT} s, and was killed")
    elif leftovers:
        log(f"leg {leg.name}: processes outlived the harness, and were killed")
    clean = not overran and not leftovers
    return read_results(out_dir), read_exits(exit_dir), time.monotonic() - started, clean


def print_report(report: LegReport, verbose: bool) -> None:
    leg = report.leg
    print(
        f"\n== {leg.name}: harness {leg.harness} {' '.join(leg.args)}".rstrip()
        + f" -- {len(report.passed)}/{report.judged} judged scenarios pass, {report.seconds:.1f} s"
    )
    for scenario in report.passed:
        print(f"   pass  {scenario}")
    for scenario, problems in report.failed.items():
        print(f"   FAIL  {scenario}")
        for problem in problems if verbose else problems[:8]:
            print(f"           {problem}")
        if not verbose and len(problems) > 8:
            print(f"           ... and {len(problems) - 8} more")
    for scenario, (known, problems) in report.known.items():
        print(f"   known failure  {scenario}: {known.reason}")
        for problem in problems if verbose else problems[:3]:
            print(f"           {problem}")
    for scenario in report.stale:
        print(f"   FAIL  {scenario}: passes, but the table says it fails here: remove its known failure")
    for scenario in report.unknown:
        print(f"   FAIL  {scenario}: ran, but the table does not know it")
    if not report.clean:
        print("   FAIL  the harness overran, or left processes behind (see the log above)")
    reasons: dict[str, list[str]] = {}
    for scenario, reason in report.not_judged.items():
        reasons.setdefault(reason, []).append(scenario)
    for reason, scenarios in reasons.items():
        print(f"   not judged ({len(scenarios)}, client not started): {reason}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--dest", type=Path, default=ROOT / ".conformance", help="where the harness is installed"
    )
    parser.add_argument("--table", type=Path, default=HERE / "scenarios.toml")
    parser.add_argument("--leg", action="append", help="run only this leg (repeatable)")
    parser.add_argument(
        "--scenario", action="append", help="judge only the scenarios matching this glob (repeatable)"
    )
    parser.add_argument("--client", help="the client command (default: client.py under this Python)")
    parser.add_argument(
        "--self-test", action="store_true", help="run a client that does nothing; expect failures"
    )
    parser.add_argument("--timeout", type=int, default=120_000, help="the harness's per-scenario timeout, ms")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    table = load_table(args.table)
    if args.scenario:
        table = table.only(args.scenario)
    legs = [table.legs[name] for name in args.leg] if args.leg else list(table.legs.values())
    install(args.dest)
    if args.self_test:
        client = shlex.join([sys.executable, "-c", "pass"])
    else:
        client = args.client or shlex.join([sys.executable, str(HERE / "client.py")])

    started = time.monotonic()
    reports = []
    for leg in legs:
        log(f"leg {leg.name}: running")
        work = args.dest / ("self-test" if args.self_test else "runs") / leg.name
        judged = sorted(table.expected(leg.name))
        results, exits, seconds, clean = run_leg(args.dest, leg, judged, client, work, args.timeout)
        report = judge_leg(table, leg, results, exits)
        report.seconds = seconds
        report.clean = clean
        reports.append(report)
        if not args.self_test:
            print_report(report, args.verbose)
        log(f"leg {leg.name}: results in {work}")
    total = time.monotonic() - started

    unknown = sum(len(report.unknown) for report in reports)
    unclean = [report.leg.name for report in reports if not report.clean]
    judged = sum(report.judged for report in reports)
    if args.self_test:
        vacuous = [
            f"{report.leg.name}: {scenario}"
            for report in reports
            for scenario in [*report.passed, *report.stale]
        ]
        print(
            f"\nself-test: a client that does nothing fails {judged - len(vacuous)}/{judged} judged scenarios"
        )
        for item in vacuous:
            print(f"   PASSES WITH A CLIENT THAT DOES NOTHING: {item}")
        for report in reports:
            for scenario in report.unknown:
                print(f"   FAIL  {report.leg.name}: {scenario}: ran, but the table does not know it")
        print(f"self-test: {total:.1f} s")
        return 1 if vacuous or unknown or unclean else 0
    passed = sum(len(report.passed) for report in reports)
    known = sum(len(report.known) for report in reports)
    print(
        f"\nconformance: {passed}/{judged} judged scenario runs pass over {len(reports)} legs"
        + (f" ({known} known failures)" if known else "")
        + f", {total:.1f} s"
    )
    for report in reports:
        print(f"   {report.leg.name}: {len(report.passed)}/{report.judged}")
    return verdict(reports)


def verdict(reports: list[LegReport]) -> int:
    """The exit status of a run: 0 when every leg is as the table says it must be."""
    return 0 if all(report.ok for report in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
