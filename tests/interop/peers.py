"""Install the third-party MCP servers ("peers") that the interop tests run against.

Usage::

    python tests/interop/peers.py install DEST [--lenient]

Standard library only. Everything is pinned: the npm packages exactly, with
``@modelcontextprotocol/sdk`` overridden to one version and every transitive
dependency resolved as of a fixed date (``npm --before``); the Python packages
exactly, with every transitive dependency fixed by a constraints list (the
``pip freeze`` of a working install). What goes into ``DEST``:

* ``node/``: ``@modelcontextprotocol/server-everything``,
  ``@modelcontextprotocol/server-filesystem`` (legacy-era servers on the
  TypeScript SDK) and ``@modelcontextprotocol/server-basic-vanillajs``
  (ext-apps' basic MCP Apps example, with its view);
* ``venv/``: the official Python SDK ``mcp`` and ``mcp-server-time``
  (dual-era servers); ``tests/interop/servers/sdk_server.py`` runs on it;
* ``venv-tasks/``: ``fastmcp-tasks`` (a server of the 2026-07-28 tasks
  extension, on ``fastmcp-slim`` and ``mcp``; its own virtualenv, as it pins
  another fastmcp); ``tests/interop/servers/fastmcp_tasks_server.py`` runs on
  it;
* ``venv-sdk1/``: the official Python SDK v1 (``mcp`` 1.30.0), whose
  experimental 2025-11-25 tasks the 2.x line dropped;
  ``tests/interop/servers/sdk_v1_tasks_server.py`` runs on it;
* ``auth-node/`` and ``venv-auth/``: authorization servers, node
  ``oidc-provider`` and PyPI ``oidc-provider-mock`` (see "auth peers" below);
* ``peers.json``: for each peer, the command that starts it (``cmd``), extra
  environment (``env``) and its protocol era (``era``: ``"legacy"``,
  ``"modern"`` for a server of 2026-07-28 only, or ``"dual"`` for a server
  that speaks 2026-07-28 and the earlier revisions).
  A peer that could not be installed has ``cmd: null`` and says why under
  ``unavailable``.

Running it again is cheap: each part keeps a stamp, the hash of what it
installs, and is reinstalled only when that changes (or when it was left
half-done). Concurrent runs on one ``DEST`` wait for each other.

``--lenient``: leave out a part whose tool is missing (``node`` or ``npm``),
or fastmcp-tasks or the SDK v1 if it cannot be installed, and say so, instead
of failing.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

FORMAT = 1  # bump to force a reinstall when the layout changes

# ----------------------------------------------------------------- npm peers

NPM_BEFORE = "2026-11-29T00:00:00Z"  # transitive npm versions as of this date
NODE_PACKAGES = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    # An MCP Apps example of ext-apps (one tool with a view), bundled with its SDK.
    "@modelcontextprotocol/server-basic-vanillajs": "2.0.3",
}
NODE_OVERRIDES = {"@modelcontextprotocol/sdk": "1.32.2"}
NPM_ARGS = [
    "install",
    "--no-audit",
    "--no-fund",
    "--omit=dev",
    "--ignore-scripts",
    "--loglevel=error",
    f"--before={NPM_BEFORE}",
]

# ---------------------------------------------------------------- Python peers

# The OpenTelemetry SDK lets the SDK's server record its spans (the telemetry test's trace across processes).
REQUIREMENTS = ["mcp==2.3.0", "mcp-types==2.3.0", "mcp-server-time==2026.10.19", "opentelemetry-sdk==1.45.2"]
# `pip freeze` of a working install of REQUIREMENTS (CPython 3.11, Linux x86_64).
CONSTRAINTS = """\
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
cffi==2.1.1
click==8.5.1
cryptography==50.0.2
h11==0.16.0
httpcore2==2.16.2
httpx2==2.16.2
idna==3.20
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
opentelemetry-api==1.45.2
opentelemetry-sdk==1.45.2
opentelemetry-semantic-conventions==0.66b2
pycparser==3.12
pydantic==2.14.4
pydantic_core==2.50.5
PyJWT==2.15.1
python-multipart==0.0.34
referencing==0.37.0
rpds-py==2026.9.1
sse-starlette==3.7.0
starlette==1.10.0
truststore==0.10.5
typing-inspection==0.4.5
typing_extensions==4.16.0
tzdata==2026.6
tzlocal==5.4.5
uvicorn==0.54.0
"""

# The tasks extension's server: a virtualenv of its own (fastmcp-tasks pins fastmcp-slim).
TASKS_REQUIREMENTS = ["fastmcp-tasks==4.1.4"]
# `pip freeze` of a working install of TASKS_REQUIREMENTS (CPython 3.11, Linux x86_64).
TASKS_CONSTRAINTS = """\
aiofile==3.12.3
annotated-doc==0.0.7
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
Authlib==1.9.10
beartype==0.23.1
burner-redis==0.1.7
cachetools==8.0.2
caio==0.12.10
certifi==2026.10.19.post1
cffi==2.1.1
click==8.5.1
cloudpickle==3.1.3
cronsim==2.8
cryptography==50.0.2
cyclopts==5.5.2
dnspython==2.9.2
docstring_parser==0.18.0
email-validator==2.4.0
exceptiongroup==1.3.2
fastmcp-slim==4.1.4
fastmcp-tasks==4.1.4
griffelib==2.4.1
h11==0.16.0
httpcore2==2.16.2
httpx2==2.16.2
idna==3.20
joserfc==1.8.0
jsonref==1.1.0
jsonschema==4.26.0
jsonschema-path==0.5.0
jsonschema-specifications==2025.9.1
markdown-it-py==4.3.0
mcp==2.3.0
mcp-types==2.3.0
mdurl==0.1.2
openapi-pydantic==0.6.0
opentelemetry-api==1.45.2
packaging==26.4
pathable==0.6.0
platformdirs==4.14.9
prometheus_client==0.26.0
py-key-value-aio==0.4.6
pycparser==3.12
pydantic==2.14.4
pydantic-settings==2.16.3
pydantic_core==2.50.5
pydocket==0.27.2
Pygments==2.21.0
PyJWT==2.15.1
pyperclip==1.11.0
python-dotenv==1.2.4
python-json-logger==4.2.0
python-multipart==0.0.34
PyYAML==6.0.4
redis==8.0.1
referencing==0.37.0
rich==15.0.0
rich-rst==2.2.0
rpds-py==2026.9.1
shellingham==1.5.4
sse-starlette==3.7.0
starlette==1.10.0
truststore==0.10.5
typer==0.29.2
typing-inspection==0.4.5
typing_extensions==4.16.0
uncalled-for==0.6.2
uvicorn==0.54.0
watchfiles==1.3.0
websockets==17.4
"""

# Run by the venv's Python: exits non-zero unless each package has its pinned version.
CHECK_PINS = """\
import json, sys
from importlib.metadata import version
wrong = [f"{name} {version(name)} (want {pin})" for name, pin in json.loads(sys.argv[1]).items() if version(name) != pin]
sys.exit(", ".join(wrong) or None)
"""

# The official Python SDK v1, for its experimental 2025-11-25 tasks (gone from 2.x).
SDK1_REQUIREMENTS = ["mcp==1.30.0"]
# `pip freeze` of a working install of SDK1_REQUIREMENTS (CPython 3.11, Linux x86_64).
SDK1_CONSTRAINTS = """\
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
certifi==2026.10.19.post1
cffi==2.1.1
click==8.5.1
cryptography==51.0.1
h11==0.16.0
httpcore==1.0.9
httpx==0.29.0
httpx-sse==0.4.3
idna==3.21
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
mcp==1.30.0
pycparser==3.12
pydantic==2.14.4
pydantic-settings==2.16.3
pydantic_core==2.50.5
PyJWT==2.15.1
python-dotenv==1.2.4
python-multipart==0.0.34
referencing==0.37.0
rpds-py==2026.9.1
sse-starlette==3.7.1
starlette==1.10.0
typing-inspection==0.4.5
typing_extensions==4.16.0
uvicorn==0.55.0
"""

SDK_SERVER = Path(__file__).resolve().parent / "servers" / "sdk_server.py"
SDK1_SERVER = Path(__file__).resolve().parent / "servers" / "sdk_v1_tasks_server.py"
TASKS_SERVER = Path(__file__).resolve().parent / "servers" / "fastmcp_tasks_server.py"


def log(message: str) -> None:
    print(f"[peers] {message}", file=sys.stderr, flush=True)


class InstallError(Exception):
    pass


def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps([FORMAT, *parts], sort_keys=True).encode()).hexdigest()


def stamp_ok(directory: Path, want: str) -> bool:
    try:
        return (directory / ".peers-stamp").read_text() == want
    except OSError:
        return False


def write_stamp(directory: Path, value: str) -> None:
    (directory / ".peers-stamp").write_text(value)


def run(cmd: list[str], *, cwd: Path | None = None) -> None:
    """Run cmd; on failure, show its output and raise."""
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise InstallError(f"{' '.join(cmd[:4])} ... exited with status {done.returncode}")


# ---------------------------------------------------------------------- node


class NodePart:
    """The npm project in DEST/node; installed in the background while the venv is built."""

    def __init__(self, dest: Path) -> None:
        self.dir = dest / "node"
        self.node = shutil.which("node")
        self.npm = shutil.which("npm")
        self.proc: subprocess.Popen[str] | None = None
        self.started = 0.0
        self.package_json = json.dumps(
            {
                "name": "trio-mcp-interop-peers",
                "version": "0.0.0",
                "private": True,
                "dependencies": NODE_PACKAGES,
                "overrides": NODE_OVERRIDES,
            },
            indent=2,
        )

    def missing(self) -> str | None:
        if self.node is None or self.npm is None:
            return "Node.js (node and npm) was not found on PATH when the peers were installed"
        return None

    def stamp(self) -> str:
        assert self.node is not None
        version = subprocess.run([self.node, "--version"], capture_output=True, text=True, check=True)
        major = version.stdout.strip().lstrip("v").split(".")[0]
        return digest(self.package_json, NPM_ARGS, major)

    def start(self) -> bool:
        """Start `npm install` unless the stamp is current; return whether it was started."""
        if stamp_ok(self.dir, self.stamp()):
            log("node peers: up to date")
            return False
        log("node peers: installing")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        (self.dir / "package.json").write_text(self.package_json + "\n")
        assert self.npm is not None
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [self.npm, *NPM_ARGS],
            cwd=self.dir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        return True

    def abort(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def finish(self) -> None:
        if self.proc is None:
            return
        output, _ = self.proc.communicate()
        if self.proc.returncode != 0:
            sys.stderr.write(output)
            raise InstallError(f"npm install exited with status {self.proc.returncode}")
        for name, version in {**NODE_PACKAGES, **NODE_OVERRIDES}.items():
            manifest = self.dir / "node_modules" / name / "package.json"
            got = json.loads(manifest.read_text())["version"]
            if got != version:
                raise InstallError(f"npm installed {name} {got}, not {version}")
        write_stamp(self.dir, self.stamp())
        log(f"node peers: installed in {time.monotonic() - self.started:.1f} s")

    def module(self, package: str) -> str:
        return str(self.dir / "node_modules" / package / "dist" / "index.js")


# ---------------------------------------------------------------------- venv


def _pip_supports_python_option() -> bool:
    """Whether this interpreter's pip can install into another environment (pip >= 22.3)."""
    try:
        from pip import __version__ as pip_version
    except ImportError:
        return False
    major, minor = (int(part) for part in pip_version.split(".")[:2])
    return (major, minor) >= (22, 3)


def install_venv(
    dest: Path,
    name: str = "venv",
    requirements: list[str] = REQUIREMENTS,
    constraints: str = CONSTRAINTS,
) -> None:
    venv = dest / name
    want = digest(requirements, constraints, list(sys.version_info[:2]))
    python = venv / "bin" / "python"
    if stamp_ok(venv, want) and subprocess.run([python, "-c", ""], check=False).returncode == 0:
        log(f"python peers ({name}): up to date")
        return
    log(f"python peers ({name}): installing")
    started = time.monotonic()
    shutil.rmtree(venv, ignore_errors=True)
    venv.mkdir(parents=True)
    (venv / "requirements.txt").write_text("\n".join(requirements) + "\n")
    (venv / "constraints.txt").write_text(constraints)
    pip_args = [
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-input",
        "-r",
        str(venv / "requirements.txt"),
        "-c",
        str(venv / "constraints.txt"),
    ]
    if _pip_supports_python_option():
        # Skips installing pip into the venv, which takes seconds.
        run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
        run([sys.executable, "-m", "pip", "--python", str(python), *pip_args])
    else:
        run([sys.executable, "-m", "venv", str(venv)])
        run([str(python), "-m", "pip", *pip_args])
    pins = dict(requirement.split("==") for requirement in requirements)
    run([str(python), "-c", CHECK_PINS, json.dumps(pins)])
    write_stamp(venv, want)
    log(f"python peers ({name}): installed in {time.monotonic() - started:.1f} s")


# -------------------------------------------------------------- auth peers
#
# Authorization servers for the auth interop tests, in parts of their own:
# ``auth-node/`` (node ``oidc-provider``, certified, with dynamic
# registration, PKCE, resource indicators, rotating refresh tokens and DPoP
# offered by default; ``tests/interop/servers/oidc_provider.mjs`` runs it)
# and ``venv-auth/`` (PyPI ``oidc-provider-mock``). The protected MCP server
# in front of them runs on the SDK's virtualenv
# (``tests/interop/servers/sdk_protected_server.py``).

AUTH_NODE_PACKAGES = {"oidc-provider": "9.13.3"}
AUTH_REQUIREMENTS = ["oidc-provider-mock==0.3.4"]
# `pip freeze` of a working install of AUTH_REQUIREMENTS (CPython 3.11, Linux x86_64).
AUTH_CONSTRAINTS = """\
annotated-types==0.8.0
anyio==4.16.0
Authlib==1.9.10
blinker==1.9.0
certifi==2026.10.19.post1
cffi==2.1.1
click==8.5.1
cryptography==51.0.1
Flask==3.1.3
h11==0.16.0
htpy==26.5.1
httpcore==1.0.9
httpx==0.29.0
idna==3.21
itsdangerous==2.2.0
Jinja2==3.1.6
joserfc==1.8.0
MarkupSafe==3.0.4
oidc-provider-mock==0.3.4
pycparser==3.12
pydantic==2.14.4
pydantic_core==2.50.5
typing-inspection==0.4.5
typing_extensions==4.16.0
uvicorn==0.55.0
Werkzeug==3.1.9
"""
OIDC_PROVIDER_SERVER = Path(__file__).resolve().parent / "servers" / "oidc_provider.mjs"
SDK_PROTECTED_SERVER = Path(__file__).resolve().parent / "servers" / "sdk_protected_server.py"


def install_auth(dest: Path, *, lenient: bool) -> dict[str, dict[str, object]]:
    """Install the authorization servers; their entries of the manifest."""
    node, npm = shutil.which("node"), shutil.which("npm")
    node_dir = dest / "auth-node"
    entries: dict[str, dict[str, object]] = {}
    missing: str | None = None
    if node is None or npm is None:
        missing = "Node.js (node and npm) was not found on PATH when the peers were installed"
    else:
        package_json = json.dumps(
            {
                "name": "trio-mcp-auth-peers",
                "version": "0.0.0",
                "private": True,
                "dependencies": AUTH_NODE_PACKAGES,
            },
            indent=2,
        )
        want = digest(package_json, NPM_ARGS)
        try:
            if stamp_ok(node_dir, want):
                log("auth node peers: up to date")
            else:
                log("auth node peers: installing")
                shutil.rmtree(node_dir, ignore_errors=True)
                node_dir.mkdir(parents=True)
                (node_dir / "package.json").write_text(package_json + "\n")
                run([npm, *NPM_ARGS], cwd=node_dir)
                for name, version in AUTH_NODE_PACKAGES.items():
                    got = json.loads((node_dir / "node_modules" / name / "package.json").read_text())[
                        "version"
                    ]
                    if got != version:
                        raise InstallError(f"npm installed {name} {got}, not {version}")
                write_stamp(node_dir, want)
        except InstallError as exc:
            if not lenient:
                raise
            missing = f"oidc-provider could not be installed: {exc}"
    if missing is not None:
        if not lenient:
            raise InstallError(f"{missing} (--lenient leaves the auth peers out)")
        log(f"auth node peers: left out: {missing}")
        entries["oidc-provider"] = {"cmd": None, "env": {}, "era": "auth", "unavailable": missing}
    else:
        entries["oidc-provider"] = {
            "cmd": [node, str(OIDC_PROVIDER_SERVER)],
            "env": {"OIDC_PROVIDER_DIR": str(node_dir)},
            "era": "auth",
        }
    try:
        install_venv(dest, "venv-auth", AUTH_REQUIREMENTS, AUTH_CONSTRAINTS)
        entries["oidc-provider-mock"] = {
            "cmd": [str(dest / "venv-auth" / "bin" / "oidc-provider-mock")],
            "env": {},
            "era": "auth",
        }
    except InstallError as exc:
        if not lenient:
            raise
        log(f"python peers (venv-auth): left out: {exc}")
        entries["oidc-provider-mock"] = {
            "cmd": None,
            "env": {},
            "era": "auth",
            "unavailable": f"oidc-provider-mock could not be installed: {exc}",
        }
    # The protected MCP server runs on the SDK's virtualenv; its first argument is the issuer.
    entries["sdk-protected"] = {
        "cmd": [str(dest / "venv" / "bin" / "python"), str(SDK_PROTECTED_SERVER)],
        "env": {},
        "era": "dual",
    }
    return entries


# ------------------------------------------------------------------ manifest


def manifest(
    dest: Path,
    node: NodePart,
    node_missing: str | None,
    tasks_missing: str | None = None,
    sdk1_missing: str | None = None,
) -> dict[str, dict[str, object]]:
    venv_bin = dest / "venv" / "bin"
    sdk1: dict[str, object] = (
        {"cmd": None, "env": {}, "era": "legacy", "unavailable": sdk1_missing}
        if sdk1_missing is not None
        else {
            "cmd": [str(dest / "venv-sdk1" / "bin" / "python"), str(SDK1_SERVER)],
            "env": {},
            "era": "legacy",
        }
    )
    tasks: dict[str, object] = (
        {"cmd": None, "env": {}, "era": "modern", "unavailable": tasks_missing}
        if tasks_missing is not None
        else {
            "cmd": [str(dest / "venv-tasks" / "bin" / "python"), str(TASKS_SERVER)],
            "env": {},
            "era": "modern",
        }
    )

    def node_peer(package: str, *args: str) -> dict[str, object]:
        if node_missing is not None:
            return {"cmd": None, "env": {}, "era": "legacy", "unavailable": node_missing}
        assert node.node is not None
        return {"cmd": [node.node, node.module(package), *args], "env": {}, "era": "legacy"}

    return {
        # TypeScript SDK 1.32.2: 2025-11-25 and older.
        "everything": node_peer("@modelcontextprotocol/server-everything", "stdio"),
        # Allowed directories are extra arguments; roots from the client replace them.
        "filesystem": node_peer("@modelcontextprotocol/server-filesystem"),
        # ext-apps 2.0.3's basic example: an MCP Apps tool (get-time) and its view.
        "ext-apps-basic": node_peer("@modelcontextprotocol/server-basic-vanillajs", "--stdio"),
        # Python SDK 2.3.0: 2026-07-28, and the older revisions after `initialize`.
        "sdk": {"cmd": [str(venv_bin / "python"), str(SDK_SERVER)], "env": {}, "era": "dual"},
        "time": {
            "cmd": [str(venv_bin / "mcp-server-time"), "--local-timezone", "UTC"],
            "env": {},
            "era": "dual",
        },
        # fastmcp-tasks 4.1.4: the 2026-07-28 tasks extension.
        "fastmcp-tasks": tasks,
        # Python SDK 1.30.0: the experimental tasks of 2025-11-25.
        "sdk-v1": sdk1,
    }


def install(dest: Path, *, lenient: bool) -> None:
    started = time.monotonic()
    dest.mkdir(parents=True, exist_ok=True)
    dest = dest.resolve()
    with (dest / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        node = NodePart(dest)
        node_missing = node.missing()
        if node_missing is not None:
            if not lenient:
                raise InstallError(f"{node_missing} (--lenient leaves the node peers out)")
            log(f"node peers: left out: {node_missing}")
        if node_missing is None:
            node.start()
        tasks_missing: str | None = None
        sdk1_missing: str | None = None
        try:
            install_venv(dest)
            try:
                install_venv(dest, "venv-tasks", TASKS_REQUIREMENTS, TASKS_CONSTRAINTS)
            except InstallError as exc:
                if not lenient:
                    raise
                tasks_missing = f"fastmcp-tasks could not be installed: {exc}"
                log(f"python peers (venv-tasks): left out: {exc}")
            try:
                install_venv(dest, "venv-sdk1", SDK1_REQUIREMENTS, SDK1_CONSTRAINTS)
            except InstallError as exc:
                if not lenient:
                    raise
                sdk1_missing = f"the Python SDK v1 could not be installed: {exc}"
                log(f"python peers (venv-sdk1): left out: {exc}")
        except BaseException:
            node.abort()
            raise
        node.finish()
        peers = manifest(dest, node, node_missing, tasks_missing, sdk1_missing)
        peers.update(install_auth(dest, lenient=lenient))
        tmp = dest / "peers.json.tmp"
        tmp.write_text(json.dumps(peers, indent=2) + "\n")
        os.replace(tmp, dest / "peers.json")
    log(f"wrote {dest / 'peers.json'} in {time.monotonic() - started:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    install_cmd = commands.add_parser("install", help="install the peers into DEST and write DEST/peers.json")
    install_cmd.add_argument("dest", type=Path, metavar="DEST")
    install_cmd.add_argument(
        "--lenient",
        action="store_true",
        help="leave out the node peers if node or npm is missing, and fastmcp-tasks if it does not install",
    )
    args = parser.parse_args(argv)
    try:
        install(args.dest, lenient=args.lenient)
    except InstallError as exc:
        log(f"failed: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
