"""Development tasks for trio_mcp, run with nox.

``nox`` alone runs the test suite. The other sessions: ``nox -s fuzz``
(Hypothesis property tests at fuzzing size), ``lint``, ``typing``, ``docs``
and ``bench``. Add ``-r`` to reuse the virtualenvs of an earlier run, and
pass arguments to the underlying tool after ``--``, e.g.
``nox -s tests -- -k framing -x``.
"""

from __future__ import annotations

import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent


def _extra(name: str) -> list[str]:
    """Return the requirements of one optional-dependency group of pyproject.toml."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        extras: dict[str, list[str]] = tomllib.load(f)["project"]["optional-dependencies"]
    return extras[name]


def _run_pytest(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    """Run pytest and fail the session unless at least one test ran.

    ``session.run`` already fails the session on any non-zero exit status,
    including pytest's 5, "no tests collected". A run can still exit 0 with
    nothing tested, when every collected test is skipped; the JUnit XML
    report tells, so read it.
    """
    report = Path(session.create_tmp()) / f"junit-{session.name}.xml"
    session.run("pytest", f"--junitxml={report}", *args, env=env)
    total = skipped = 0
    for suite in ET.parse(report).getroot().iter("testsuite"):
        total += int(suite.get("tests", "0"))
        skipped += int(suite.get("skipped", "0"))
    if total - skipped <= 0:
        session.error(f"no test ran ({total} collected, {skipped} skipped)")
    session.log(f"{total - skipped} tests ran ({skipped} skipped)")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite."""
    session.install("-e", ".[test]")
    _run_pytest(session, *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Run the Hypothesis property tests with many more examples.

    Property tests carry the ``property`` marker; the ``fuzz`` profile
    (tests/conftest.py) raises the number of examples per test.
    """
    session.install("-e", ".[test]")
    _run_pytest(session, "-m", "property", *session.posargs, env={"HYPOTHESIS_PROFILE": "fuzz"})


@nox.session
def lint(session: nox.Session) -> None:
    """Check the code with ruff: lint rules and formatting."""
    session.install(*_extra("lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typing(session: nox.Session) -> None:
    """Type-check the library and this file strictly (configuration in pyproject.toml)."""
    session.install("-e", ".[typing]", "nox")
    session.run("mypy", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the HTML documentation, failing on any warning."""
    session.install("-e", ".[docs]")
    session.run(
        "sphinx-build", "-W", "-n", "--keep-going", "-b", "html", "docs", "docs/_build/html", *session.posargs
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Run the benchmarks."""
    session.install(".")
    session.run("python", "benchmarks/bench.py", *session.posargs)
