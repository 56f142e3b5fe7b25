"""ci/mutants' driver: mutation testing of one module or package with cosmic-ray.

`bash ci/mutants PATH` (see ci/mutants.md). cosmic-ray lists the mutants (its `init`, its
operator and pragma filters, its session database); this driver runs them, because the
runs here have needs its own `exec` does not meet:

- Each mutant is written into the checkout itself, so the worker processes that tests start
  import it too. Every file is kept, before the first mutant, in memory and in
  `.sessionflow-test/mutants/backup/`, and put back after each mutant, on Ctrl-C, on any
  failure, and (from the backup) at the start of the next run if this one was SIGKILLed.
- Tests run under the machine's shared lock (`ci/heavy`'s), taken for a slice of mutants at
  a time, so a long run takes turns with other people's test runs. Waiting for the lock
  is not part of any mutant's time limit.
- A mutant runs only the tests that run its line: one baseline run under coverage records,
  per line, which tests ran it (in this process or in the worker processes they started).
  A line that runs outside any one test (at import, in a shared fixture) runs every mapped
  test; a line that no test runs is a survivor without a run.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import fcntl
import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, cast

import coverage
from cosmic_ray.mutating import mutate_code  # pyright: ignore[reportUnknownVariableType]
from cosmic_ray.plugins import get_operator  # pyright: ignore[reportUnknownVariableType]
from cosmic_ray.work_db import WorkDB
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkItem, WorkResult

ROOT = Path(__file__).resolve().parent.parent
STATE = ROOT / ".sessionflow-test" / "mutants"
# Per process, so two runs on different modules can share the checkout (the lock keeps
# their mutants apart): a run only puts back the backups of runs that are no longer alive.
BACKUP = STATE / f"backup-{os.getpid()}"
MAPPING = ROOT / "ci" / "mutants-tests.txt"
NOTES = ROOT / "ci" / "mutants.md"
PYTHON = ROOT / ".venv" / "bin" / "python"
LOCK = Path(os.environ.get("SESSIONFLOW_HEAVY_LOCK", "/tmp/sessionflow-heavy.lock"))
EVERY_TEST = "*"

# The operators run. Each one changes what code does in a way a test can see; left out are
# cosmic-ray's cross products of unrelated operators (`+` to `>>`, `<` to `is`: killed by
# anything, so they cost time and tell nothing), `==`/`is` swaps (equal for the None and
# enum members this code compares) and the variable replacer/inserter (random values).
KEPT_OPERATORS = (
    "ReplaceComparisonOperator_(Lt_LtE|Lt_GtE|LtE_Lt|LtE_Gt|Gt_GtE|Gt_LtE|GtE_Gt|GtE_Lt"
    "|Eq_NotEq|NotEq_Eq|Is_IsNot|IsNot_Is)",
    "ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Mul|Mod_FloorDiv|Pow_Mul"
    "|LShift_RShift|RShift_LShift|BitOr_BitAnd|BitAnd_BitOr|BitXor_BitOr)",
    "ReplaceUnaryOperator_(USub_UAdd|Delete_Not)",
    "AddNot",
    "ReplaceTrueWithFalse",
    "ReplaceFalseWithTrue",
    "ReplaceAndWithOr",
    "ReplaceOrWithAnd",
    "ReplaceBreakWithContinue",
    "ReplaceContinueWithBreak",
    "ExceptionReplacer",
    "NumberReplacer",
    "RemoveDecorator",
    "ZeroIterationForLoop",
)


class UsageError(Exception):
    """Bad input: printed as one line, never a traceback."""


# --- what to mutate, and which tests cover it ---------------------------------------------------


def source_files(target: str) -> list[Path]:
    """The Python files of a module or package, given as a path or a dotted name."""
    path = Path(target)
    if not path.is_absolute():
        path = ROOT / path
    if not path.exists() and re.fullmatch(r"[A-Za-z_][\w.]*", target):
        relative = Path(*target.split("."))
        found = [
            candidate
            for src in sorted(ROOT.glob("packages/*/src"))
            for candidate in (src / relative, (src / relative).with_suffix(".py"))
            if candidate.exists()
        ]
        if not found:
            raise UsageError(f"no module or package {target!r} under packages/*/src")
        path = found[0]
    if not path.exists():
        raise UsageError(f"{target}: no such file or folder")
    path = path.resolve()
    if not any(path.is_relative_to(src.resolve()) for src in ROOT.glob("packages/*/src")):
        raise UsageError(f"{target}: not under packages/*/src (ci/mutants mutates the packages' code)")
    if path.is_file():
        if path.suffix != ".py":
            raise UsageError(f"{target}: not a Python file")
        return [path]
    return sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)


def package_relative(path: Path) -> Path:
    """`packages/core/src/sessionflow/x.py` -> `sessionflow/x.py`."""
    for src in ROOT.glob("packages/*/src"):
        if path.is_relative_to(src.resolve()):
            return path.relative_to(src.resolve())
    raise UsageError(f"{path}: not under packages/*/src")


def read_mapping() -> list[tuple[str, list[str]]]:
    entries: list[tuple[str, list[str]]] = []
    for line in MAPPING.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2:
            entries.append((words[0], words[1:]))
    return entries


def tests_for(path: Path) -> list[str]:
    """The tests that cover a source file: a line of ci/mutants-tests.txt, else the mirror."""
    relative = package_relative(path).as_posix()
    matches = [(prefix, tests) for prefix, tests in read_mapping() if relative.startswith(prefix)]
    if matches:
        return max(matches, key=lambda match: len(match[0]))[1]
    parts = relative.split("/")
    if parts[0] == "sessionflow" and len(parts) > 2:
        mirror = Path("tests", *parts[1:-1])
        if (ROOT / mirror).is_dir():
            return [mirror.as_posix()]
    raise UsageError(
        f"{relative}: no test folder mirrors it; add a line to {MAPPING.relative_to(ROOT)} "
        "naming the tests that cover it"
    )


# --- the checkout, kept safe ----------------------------------------------------------------------


class Checkout:
    """The files being mutated: their originals, kept in memory and on disk until put back."""

    def __init__(self, files: Sequence[Path]) -> None:
        self.originals = {path: path.read_bytes() for path in files}
        self._times = {path: path.stat().st_mtime_ns for path in files}
        # Each mutant gets a modification time (whole seconds) of its own, later than any
        # original's: see _drop_bytecode.
        self._next_second = max(time.time_ns() // 10**9, *(t // 10**9 for t in self._times.values())) + 1
        BACKUP.mkdir(parents=True, exist_ok=True)
        manifest: dict[str, str] = {}
        for index, (path, content) in enumerate(self.originals.items()):
            copy = BACKUP / f"{index}.py"
            copy.write_bytes(content)
            manifest[str(path)] = copy.name
        # The manifest is written last: a backup without one was never in use.
        (BACKUP / "manifest.json").write_text(json.dumps(manifest))

    def write(self, path: Path, text: str) -> None:
        path.write_text(text, encoding="utf-8")
        second = self._next_second * 10**9
        self._next_second += 1
        os.utime(path, ns=(second, second))
        _drop_bytecode(path)

    def put_back(self, path: Path) -> None:
        if path.read_bytes() != self.originals[path]:
            path.write_bytes(self.originals[path])
        os.utime(path, ns=(self._times[path], self._times[path]))
        _drop_bytecode(path)

    def restore_all(self) -> None:
        for path in self.originals:
            self.put_back(path)
        changed = [path for path, content in self.originals.items() if path.read_bytes() != content]
        if changed:
            raise RuntimeError(f"could not put back {changed}; the originals are in {BACKUP}")
        shutil.rmtree(BACKUP, ignore_errors=True)
        # Bytecode for the originals again, as ci/setup.sh leaves it.
        subprocess.run(
            [str(PYTHON), "-m", "compileall", "-q", *map(str, self.originals)], cwd=ROOT, check=False
        )


def restore_leftovers() -> None:
    """Puts back the files of a run that was killed before it could (SIGKILL, a lost machine)."""
    for backup in sorted(STATE.glob("backup-*")):
        if _alive(int(backup.name.removeprefix("backup-"))):
            continue
        manifest = backup / "manifest.json"
        if manifest.exists():
            for path, copy in cast(dict[str, str], json.loads(manifest.read_text())).items():
                original = (backup / copy).read_bytes()
                target = Path(path)
                if target.read_bytes() != original:
                    print(
                        f"ci/mutants: putting back {target.relative_to(ROOT)}, left mutated by a killed run"
                    )
                    target.write_bytes(original)
                _drop_bytecode(target)
        shutil.rmtree(backup)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _drop_bytecode(path: Path) -> None:
    # A .pyc is checked against its source's size and modification second only, and a
    # mutant often has the original's size. So each version of the file (the original,
    # each mutant) has a modification second of its own, and the .pyc of the version before
    # is removed: a process always runs what is on disk. (Test runs do write bytecode, as
    # pytest's cache of rewritten test modules needs: it halves a run's start-up.)
    for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        pyc.unlink(missing_ok=True)


def git_status(files: Sequence[Path]) -> str:
    """`git status` of the mutated files (other files may change meanwhile: your own edits)."""
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", *map(str, files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


# --- the shared lock ------------------------------------------------------------------------------


class HeavyLock:
    """ci/heavy's lock, held for a slice of mutants at a time, then offered to whoever waits."""

    def __init__(self, slice_seconds: float) -> None:
        self._slice = slice_seconds
        self._file = LOCK.open("a")
        self._since: float | None = None

    def turn(self) -> None:
        if self._since is not None and time.monotonic() - self._since > self._slice:
            self.release()
            # A run blocked on the lock wakes as it is released; this pause lets it take it.
            time.sleep(2)
        if self._since is None:
            try:
                fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(f"ci/mutants: waiting for another heavy run (lock {LOCK})", flush=True)
                fcntl.flock(self._file, fcntl.LOCK_EX)
            self._since = time.monotonic()

    def release(self) -> None:
        if self._since is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._since = None


# --- running tests --------------------------------------------------------------------------------


@dataclass
class Run:
    """One pytest run's outcome, as the plugin recorded it."""

    exitstatus: int
    durations: dict[str, float]
    failed: list[str]
    first_failure: dict[str, Any] | None
    seconds: float
    hung: bool = False
    modules: dict[str, str] = field(default_factory=dict[str, str])

    @property
    def time_limit(self) -> bool:
        return self.hung or bool(self.first_failure and self.first_failure.get("time_limit"))


class Interrupted(Exception):
    """SIGTERM or SIGHUP: ends the run the way Ctrl-C does."""


def _interrupt(signum: int, _frame: object) -> NoReturn:
    raise Interrupted(signal.Signals(signum).name)


class ForkServer:
    """ci/_mutants_forkserver.py: forks a pytest run per mutant from a process that has
    imported the third-party modules once."""

    def __init__(self, modules: Sequence[str]) -> None:
        self._process = subprocess.Popen(
            [str(PYTHON), str(ROOT / "ci" / "_mutants_forkserver.py"), json.dumps(list(modules))],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        if self._read(None) != {"ready": True}:
            raise RuntimeError("the fork server did not start")

    def _read(self, timeout: float | None) -> dict[str, Any] | None:
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], timeout)
        if not ready:
            return None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("the fork server ended")
        return cast(dict[str, Any], json.loads(line))

    def run(self, args: Sequence[str], env: dict[str, str], log: Path, timeout: float) -> tuple[int, bool]:
        """Exit status and whether the time limit ended it."""
        assert self._process.stdin is not None
        self._process.stdin.write(
            json.dumps({"args": list(args), "env": env, "log": str(log), "cwd": str(ROOT)})
        )
        self._process.stdin.write("\n")
        self._process.stdin.flush()
        started = self._read(60)
        if started is None:
            raise RuntimeError("the fork server did not answer")
        pid = cast(int, started["pid"])
        try:
            ended = self._read(timeout)
            if ended is not None:
                return cast(int, ended["status"]), False
            _stop_group(pid, lambda grace: self._read(grace) is not None)
            return -1, True
        except BaseException:
            _stop_group(pid, lambda grace: self._read(grace) is not None)
            raise

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def preloadable(modules: dict[str, str]) -> list[str]:
    """The modules a fork server may import ahead: any but this repository's own."""
    venv = ROOT / ".venv"
    kept: list[str] = []
    for name, file in modules.items():
        if name == "__main__" or name.split(".")[0] in ("tests", "conftest", "_mutants_plugin"):
            continue
        if name.split(".")[0].startswith("sessionflow"):
            continue
        if file and Path(file).is_relative_to(ROOT) and not Path(file).is_relative_to(venv):
            continue
        kept.append(name)
    return kept


def run_pytest(
    tests: Sequence[str],
    *,
    selection: Sequence[str] | None,
    per_test_timeout: float,
    overall_timeout: float,
    log: Path,
    first_failure_stops: bool = True,
    extra_env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
    server: ForkServer | None = None,
) -> Run:
    work = STATE / f"run-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    result = work / "result.json"
    args = [
        "-n", "0", "-q", "-p", "no:cacheprovider", "-p", "_mutants_plugin",
        # A fork server's child finds pytest's plugins imported already: nothing to warn of.
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
        f"--timeout={per_test_timeout:.0f}", f"--mutants-result={result}",
    ]  # fmt: skip
    if first_failure_stops:
        args.append("-x")
    if selection is not None:
        chosen = work / "selection.txt"
        chosen.write_text("\n".join(selection) + "\n")
        args.append(f"--mutants-select={chosen}")
        # Only the files that hold the chosen tests are collected.
        tests = list(dict.fromkeys(node.split("::", 1)[0] for node in selection))
    args += [*extra_args, *tests]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "ci"), env.get("PYTHONPATH", "")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # The payload folder each test process would make (tests/conftest.py) is made here, and
    # removed with the run's other files.
    env["SESSIONFLOW_PAYLOADS"] = str(work / "payloads")
    env.update(extra_env or {})
    started = time.monotonic()
    if server is not None:
        exitstatus, hung = server.run(args, env, log, overall_timeout)
    else:
        exitstatus, hung = _run_process([str(PYTHON), "-m", "pytest", *args], env, log, overall_timeout)
    seconds = time.monotonic() - started
    if result.exists():
        data = cast(dict[str, Any], json.loads(result.read_text()))
        return Run(
            exitstatus=exitstatus,
            durations=cast(dict[str, float], data["durations"]),
            failed=cast(list[str], data["failed"]),
            first_failure=cast(dict[str, Any] | None, data["first_failure"]),
            seconds=seconds,
            hung=hung,
            modules=cast(dict[str, str], data.get("modules", {})),
        )
    tail = log.read_text()[-2000:]
    return Run(
        exitstatus=exitstatus,
        durations={},
        failed=[],
        first_failure={"test": "(pytest did not finish)", "when": "run", "time_limit": hung, "text": tail},
        seconds=seconds,
        hung=hung,
    )


def _run_process(args: Sequence[str], env: dict[str, str], log: Path, timeout: float) -> tuple[int, bool]:
    with log.open("w") as out:
        process = subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )

        def ended(grace: float) -> bool:
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                return False
            return True

        try:
            if ended(timeout):
                return process.returncode, False
            _stop_group(process.pid, ended)
            return -1, True
        except BaseException:
            _stop_group(process.pid, ended)
            raise


def _stop_group(pid: int, ended: Callable[[float], bool]) -> None:
    """Ctrl-C for a test run's whole process group (its fixtures tear down), then SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGINT)
    if ended(20):
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    ended(60)


# --- coverage: which tests run each line ----------------------------------------------------------


@dataclass
class Coverage:
    """Per file and line, the node ids of the tests that ran it (EVERY_TEST: outside one test)."""

    lines: dict[str, dict[int, list[str]]]
    order: list[str]
    durations: dict[str, float]
    preload: list[str]

    def tests_for(self, path: Path, lines: Sequence[int]) -> list[str] | None:
        """The tests to run for a change on these lines; None for all of them."""
        by_line = self.lines.get(str(path), {})
        found: set[str] = set()
        for line in lines:
            found.update(by_line.get(line, ()))
        if EVERY_TEST in found:
            return None
        return [test for test in self.order if test in found]

    def save(self, path: Path) -> None:
        path.write_text(
            json.dumps(
                {
                    "lines": self.lines,
                    "order": self.order,
                    "durations": self.durations,
                    "preload": self.preload,
                }
            )
        )

    @classmethod
    def load(cls, path: Path) -> Coverage:
        data = cast(dict[str, Any], json.loads(path.read_text()))
        lines = {
            name: {int(line): tests for line, tests in by_line.items()}
            for name, by_line in cast(dict[str, dict[str, list[str]]], data["lines"]).items()
        }
        return cls(
            lines,
            cast(list[str], data["order"]),
            cast(dict[str, float], data["durations"]),
            cast(list[str], data["preload"]),
        )


def baseline(files: Sequence[Path], tests: Sequence[str], session: Path, lock: HeavyLock) -> Coverage:
    """Runs every mapped test once, unmutated, under coverage: they must pass, and the run
    says which tests run each line."""
    data_dir = session / "coverage"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    rc = session / "coverage.rc"
    include = "".join(f"\n    {path}" for path in files)
    # Child processes read this file when they start (COVERAGE_PROCESS_START and the .pth
    # file coverage installs): `context` is expanded from their own environment, where the
    # plugin put the name of the test that started them.
    rc.write_text(
        "[run]\n"
        f"data_file = {data_dir / 'data'}\n"
        "parallel = True\n"
        "sigterm = True\n"
        "context = ${SF_MUTANTS_CONTEXT}\n"
        f"include ={include}\n"
        "disable_warnings = no-data-collected, module-not-imported, module-not-measured, "
        "include-ignored, no-ctracer\n"
    )
    print(f"ci/mutants: baseline: {' '.join(tests)} under coverage", flush=True)
    lock.turn()
    run = run_pytest(
        tests,
        selection=None,
        per_test_timeout=600,
        overall_timeout=4 * 3600,
        log=session / "baseline.log",
        first_failure_stops=False,
        extra_env={"COVERAGE_PROCESS_START": str(rc), "SF_MUTANTS_CONTEXT": "shared"},
        extra_args=["--mutants-contexts"],
    )
    lock.release()
    if run.exitstatus != 0 or run.failed:
        failed = run.failed or [cast(str, (run.first_failure or {}).get("test"))]
        raise UsageError(
            f"the tests fail without any mutant ({', '.join(failed[:5])}); "
            f"see {(session / 'baseline.log').relative_to(ROOT)}"
        )
    print(f"ci/mutants: baseline passed: {len(run.durations)} tests in {run.seconds:.0f} s", flush=True)
    combined = coverage.Coverage(config_file=str(rc))
    combined.combine(strict=False)
    data = combined.get_data()
    lines: dict[str, dict[int, list[str]]] = {}
    for measured in data.measured_files():
        by_line: dict[int, list[str]] = {}
        for line, contexts in data.contexts_by_lineno(measured).items():
            tests_here: set[str] = set()
            for context in contexts:
                last = context.rsplit("|", 1)[-1]
                tests_here.add(last[len("test:") :] if last.startswith("test:") else EVERY_TEST)
            by_line[line] = sorted(tests_here)
        lines[str(Path(measured).resolve())] = by_line
    return Coverage(lines, list(run.durations), run.durations, preloadable(run.modules))


# --- mutants --------------------------------------------------------------------------------------


@dataclass
class Mutant:
    item: WorkItem
    path: Path
    operator: str
    occurrence: int
    line: int

    @classmethod
    def of(cls, item: WorkItem) -> Mutant:
        spec = item.mutations[0]
        return cls(
            item=item,
            path=(ROOT / spec.module_path).resolve(),
            operator=spec.operator_name,
            occurrence=spec.occurrence,
            line=spec.start_pos[0],
        )

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def short_operator(self) -> str:
        return self.operator.removeprefix("core/")

    def mutated(self, original: str) -> str | None:
        operator_class = cast(type, get_operator(self.operator))
        return cast(str | None, mutate_code(original, operator_class(), self.occurrence))


def change(original: str, mutated: str) -> tuple[str, str]:
    """The lines a mutant changes, before and after."""
    before: list[str] = []
    after: list[str] = []
    for line in difflib.unified_diff(original.splitlines(), mutated.splitlines(), n=0, lineterm=""):
        if line.startswith(("---", "+++", "@@")):
            continue
        (before if line.startswith("-") else after).append(line[1:].strip())
    return " / ".join(before), " / ".join(after)


class SourceMap:
    """Per file: the statement around each line, and what is never worth a mutant."""

    def __init__(self, path: Path) -> None:
        tree = ast.parse(path.read_text())
        self._statements: list[tuple[int, int]] = []
        self._skipped: list[tuple[int, int, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt):
                body = cast(list[ast.stmt] | None, getattr(node, "body", None))
                end = node.end_lineno or node.lineno
                if body:
                    # A compound statement's own lines are its header, not its body.
                    end = max(node.lineno, body[0].lineno - 1)
                self._statements.append((node.lineno, end))
            # Type annotations are not run (every module has `from __future__ import
            # annotations`), and neither is what `if TYPE_CHECKING:` guards.
            annotations: list[ast.expr | None] = []
            if isinstance(node, ast.arg):
                annotations.append(node.annotation)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                annotations.append(node.returns)
            elif isinstance(node, ast.AnnAssign):
                annotations.append(node.annotation)
            for annotation in annotations:
                if annotation is not None:
                    self._skipped.append(
                        (annotation.lineno, annotation.end_lineno or annotation.lineno, "a type annotation")
                    )
            if isinstance(node, ast.If) and ast.unparse(node.test) in (
                "TYPE_CHECKING",
                "typing.TYPE_CHECKING",
            ):
                self._skipped.append((node.lineno, node.end_lineno or node.lineno, "only for type checkers"))

    def statement_lines(self, line: int) -> list[int]:
        around = [(start, end) for start, end in self._statements if start <= line <= end]
        if not around:
            return [line]
        start, end = min(around, key=lambda span: span[1] - span[0])
        return list(range(start, end + 1))

    def skip_reason(self, start: tuple[int, int], end: tuple[int, int]) -> str | None:
        for first, last, reason in self._skipped:
            if first <= start[0] and end[0] <= last:
                return reason
        return None


# --- equivalent mutants listed in ci/mutants.md --------------------------------------------------

_EQUIVALENT_HEADER = re.compile(r"^(packages/\S+\.py):(\d+) (core/\S+)\s*$")


def listed_equivalents() -> set[tuple[str, str, str, str]]:
    """(file, operator, line before, line after) of each mutant ci/mutants.md lists as equivalent."""
    found: set[tuple[str, str, str, str]] = set()
    lines = NOTES.read_text().splitlines() if NOTES.exists() else []
    for index, line in enumerate(lines):
        header = _EQUIVALENT_HEADER.match(line.strip())
        if header and index + 2 < len(lines):
            before, after = lines[index + 1].strip(), lines[index + 2].strip()
            if before.startswith("- ") and after.startswith("+ "):
                found.add((header[1], header[3], before[2:].strip(), after[2:].strip()))
    return found


# --- the session ----------------------------------------------------------------------------------


@dataclass
class Session:
    target: str
    files: list[Path]
    tests: list[str]
    folder: Path = field(init=False)

    def __post_init__(self) -> None:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", self.target).strip("-") or "root"
        self.folder = STATE / slug

    @property
    def database(self) -> Path:
        return self.folder / "session.sqlite"

    @property
    def info(self) -> Path:
        return self.folder / "session.json"

    def fingerprint(self) -> dict[str, str]:
        return {
            str(path.relative_to(ROOT)): hashlib.sha256(path.read_bytes()).hexdigest() for path in self.files
        }

    def create(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        config = self.folder / "config.toml"
        kept = "|".join(KEPT_OPERATORS)
        relative = [str(path.relative_to(ROOT)) for path in self.files]
        config.write_text(
            "[cosmic-ray]\n"
            f"module-path = {json.dumps(relative)}\n"
            "timeout = 3600.0\n"
            "excluded-modules = []\n"
            "# ci/_mutants.py runs the tests (under ci/heavy, only those that run the line).\n"
            'test-command = "bash ci/mutants"\n'
            "[cosmic-ray.distributor]\n"
            'name = "local"\n'
            "[cosmic-ray.filters.operators-filter]\n"
            f"exclude-operators = [{json.dumps(f'core/(?!({kept})$)')}]\n"
        )
        bin_dir = PYTHON.parent
        for command in (
            [str(bin_dir / "cosmic-ray"), "init", str(config), str(self.database)],
            [str(bin_dir / "cr-filter-operators"), str(self.database), str(config)],
            [str(bin_dir / "cr-filter-pragma"), str(self.database)],
        ):
            subprocess.run(command, cwd=ROOT, check=True)
        self.info.write_text(
            json.dumps({"target": self.target, "tests": self.tests, "files": self.fingerprint()})
        )

    def check_unchanged(self) -> None:
        if not self.database.exists():
            raise UsageError(f"no earlier run for {self.target}; run without --resume/--survivors/--report")
        recorded = cast(dict[str, Any], json.loads(self.info.read_text()))
        if recorded["files"] != self.fingerprint():
            raise UsageError(
                f"the code of {self.target} changed since its run began, so its mutants are not the "
                "ones recorded; run it afresh (without --resume/--survivors)"
            )


def record(db: WorkDB, job_id: str, result: WorkResult) -> None:
    db.set_result(job_id, result)  # pyright: ignore[reportUnknownMemberType]


def skip_uninteresting(db: WorkDB) -> None:
    """Marks as skipped the mutants of code that never runs (annotations, TYPE_CHECKING)."""
    maps: dict[Path, SourceMap] = {}
    for item in cast(Sequence[WorkItem], db.pending_work_items):
        spec = item.mutations[0]
        path = (ROOT / spec.module_path).resolve()
        source = maps.setdefault(path, SourceMap(path))
        reason = source.skip_reason(spec.start_pos, spec.end_pos)
        if reason:
            record(db, item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=reason))


def run_mutants(
    session: Session,
    db: WorkDB,
    items: Sequence[WorkItem],
    cov: Coverage,
    lock: HeavyLock,
    checkout: Checkout,
    server: ForkServer | None,
) -> None:
    mutants = sorted(
        (Mutant.of(item) for item in items), key=lambda m: (str(m.path), m.line, m.operator, m.occurrence)
    )
    maps: dict[Path, SourceMap] = {}
    originals = {path: content.decode("utf-8") for path, content in checkout.originals.items()}
    width = len(str(len(mutants)))
    for number, mutant in enumerate(mutants, 1):
        original = originals[mutant.path]
        mutated = mutant.mutated(original)
        if mutated is None:
            record(db, mutant.item.job_id, WorkResult(worker_outcome=WorkerOutcome.NO_TEST))
            continue
        before, after = change(original, mutated)
        diff = f"- {before}\n+ {after}"
        source = maps.setdefault(mutant.path, SourceMap(mutant.path))
        selection = cov.tests_for(mutant.path, source.statement_lines(mutant.line))
        progress = f"[{number:>{width}}/{len(mutants)}] {mutant.where} {mutant.short_operator}"
        if selection == []:
            details = {"tests": 0, "seconds": 0.0, "not_run": True}
            record(
                db,
                mutant.item.job_id,
                WorkResult(
                    worker_outcome=WorkerOutcome.NORMAL,
                    test_outcome=TestOutcome.SURVIVED,
                    output=json.dumps(details),
                    diff=diff,
                ),
            )
            print(f"{progress}: survived (no test runs this line)", flush=True)
            continue
        chosen = cov.order if selection is None else selection
        slowest = max((cov.durations.get(test, 1.0) for test in chosen), default=1.0)
        total = sum(cov.durations.get(test, 1.0) for test in chosen)
        lock.turn()
        checkout.write(mutant.path, mutated)
        try:
            run = run_pytest(
                session.tests,
                selection=selection,
                per_test_timeout=max(30.0, 5 * slowest),
                overall_timeout=120 + 3 * total,
                log=session.folder / "last-mutant.log",
                server=server,
            )
        finally:
            checkout.put_back(mutant.path)
        killed = run.exitstatus != 0
        details = {
            "tests": len(chosen),
            "seconds": round(run.seconds, 1),
            "by": (run.first_failure or {}).get("test"),
            "time_limit": killed and run.time_limit,
        }
        record(
            db,
            mutant.item.job_id,
            WorkResult(
                worker_outcome=WorkerOutcome.NORMAL,
                test_outcome=TestOutcome.KILLED if killed else TestOutcome.SURVIVED,
                output=json.dumps(details),
                diff=diff,
            ),
        )
        verdict = "killed" if killed else "SURVIVED"
        if killed and run.time_limit:
            verdict = "killed by a time limit"
        print(f"{progress}: {verdict} ({len(chosen)} tests, {run.seconds:.1f} s)", flush=True)


# --- the report -----------------------------------------------------------------------------------


def report(session: Session, db: WorkDB) -> float:
    equivalents = listed_equivalents()
    counts = {"killed": 0, "time_limit": 0, "survived": 0, "equivalent": 0, "skipped": 0, "not_run": 0}
    survivors: list[tuple[str, int, str, str, bool]] = []
    by_time_limit: list[str] = []
    completed = cast(Sequence[tuple[WorkItem, WorkResult]], db.completed_work_items)
    pending = len(cast(Sequence[WorkItem], db.pending_work_items))
    for item, result in completed:
        spec = item.mutations[0]
        if result.worker_outcome != WorkerOutcome.NORMAL:
            counts["skipped"] += 1
            continue
        details = cast(dict[str, Any], json.loads(result.output or "{}"))
        before, after = (result.diff or "- \n+ ").split("\n", 1)
        before, after = before[2:], after[2:]
        where = str(spec.module_path)
        if result.test_outcome == TestOutcome.KILLED:
            counts["killed"] += 1
            if details.get("time_limit"):
                counts["time_limit"] += 1
                by_time_limit.append(
                    f"{where}:{spec.start_pos[0]} {spec.operator_name.removeprefix('core/')}"
                )
            continue
        if (where, spec.operator_name, before, after) in equivalents:
            counts["equivalent"] += 1
            continue
        counts["survived"] += 1
        not_run = bool(details.get("not_run"))
        counts["not_run"] += not_run
        survivors.append(
            (where, spec.start_pos[0], spec.operator_name, f"- {before}\n      + {after}", not_run)
        )
    scored = counts["killed"] + counts["survived"] + counts["equivalent"]
    score = (
        100.0 * counts["killed"] / (scored - counts["equivalent"]) if scored > counts["equivalent"] else 0.0
    )
    raw = 100.0 * counts["killed"] / scored if scored else 0.0
    print()
    print(f"ci/mutants: {session.target} (tests: {' '.join(session.tests)})")
    print(
        f"  {scored} mutants run: {counts['killed']} killed ({counts['time_limit']} of them by a time limit), "
        f"{counts['survived']} survived ({counts['not_run']} on lines no test runs), "
        f"{counts['equivalent']} listed as equivalent in ci/mutants.md; "
        f"{counts['skipped']} not run (filtered operators, annotations); {pending} pending"
    )
    print(f"  score: {score:.1f}% killed of the mutants not listed as equivalent ({raw:.1f}% of all)")
    for line in sorted(by_time_limit):
        print(f"  killed only by a time limit: {line}")
    if survivors:
        print("  survivors (file:line operator, then the line before and after):")
    for where, line, operator, text, not_run in sorted(survivors):
        note = "  [no test runs this line]" if not_run else ""
        print(f"    {where}:{line} {operator}{note}\n      {text}")
    return score


# --- main -----------------------------------------------------------------------------------------


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bash ci/mutants",
        description="Mutation testing of a module or package with the tests that cover it (ci/mutants.md).",
    )
    parser.add_argument(
        "targets",
        nargs="+",
        metavar="target",
        help="modules or packages: paths under packages/*/src, or dotted names",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true", help="run the mutants an interrupted run left")
    mode.add_argument(
        "--survivors",
        action="store_true",
        help="run the survivors of the last run again (after adding tests)",
    )
    mode.add_argument("--report", action="store_true", help="print the last run's report")
    parser.add_argument(
        "--tests",
        nargs="+",
        default=None,
        help="these tests instead of the mapped ones (ci/mutants-tests.txt)",
    )
    parser.add_argument(
        "--no-fork",
        action="store_true",
        help="start each mutant's pytest afresh instead of forking it from a process that has "
        "imported the third-party modules (slower by 1-2 s a mutant; the same outcomes)",
    )
    parser.add_argument(
        "--slice", type=float, default=180.0, help="seconds to hold ci/heavy's lock before offering it (180)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    args = parse(argv)
    restore_leftovers()
    files = sorted({path for target in args.targets for path in source_files(target)})
    target = " ".join(args.targets)
    tests = (
        list(args.tests) if args.tests else list(dict.fromkeys(t for path in files for t in tests_for(path)))
    )
    session = Session(target, files, tests)
    if args.report:
        session.check_unchanged()
        with _open(session.database) as db:
            report(session, db)
        return 0
    status_before = git_status(files)
    # Ctrl-C puts every file back, even where SIGINT came ignored (a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    lock = HeavyLock(args.slice)
    if args.resume or args.survivors:
        session.check_unchanged()
    else:
        session.create()
    checkout = Checkout(files)
    restored = False
    try:
        with _open(session.database) as db:
            skip_uninteresting(db)
            map_file = session.folder / "coverage.json"
            if args.resume and map_file.exists():
                cov = Coverage.load(map_file)
            else:
                cov = baseline(files, tests, session.folder, lock)
                cov.save(map_file)
            if args.survivors:
                items = [
                    item
                    for item, result in cast(Sequence[tuple[WorkItem, WorkResult]], db.completed_work_items)
                    if result.worker_outcome == WorkerOutcome.NORMAL
                    and result.test_outcome == TestOutcome.SURVIVED
                ]
            else:
                items = list(cast(Sequence[WorkItem], db.pending_work_items))
            print(f"ci/mutants: {len(items)} mutants to run", flush=True)
            server = None if args.no_fork else ForkServer(cov.preload)
            try:
                run_mutants(session, db, items, cov, lock, checkout, server)
            finally:
                if server is not None:
                    server.close()
            lock.release()
            score = report(session, db)
    finally:
        lock.release()
        checkout.restore_all()
        shutil.rmtree(STATE / f"run-{os.getpid()}", ignore_errors=True)
        restored = git_status(files) == status_before
    if not restored:
        print(
            f"ci/mutants: git status of the mutated files differs from before the run:\n{git_status(files)}",
            file=sys.stderr,
        )
        return 3
    print("ci/mutants: every mutated file is as it was (git status of them unchanged)")
    return 0 if score >= 90.0 else 1


@contextlib.contextmanager
def _open(path: Path) -> Generator[WorkDB]:
    db = WorkDB(path, WorkDB.Mode.open)
    try:
        yield db
    finally:
        db.close()


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as error:
        print(f"ci/mutants: {error}", file=sys.stderr)
        sys.exit(2)
    except (KeyboardInterrupt, Interrupted):
        print("ci/mutants: interrupted; every file was put back", file=sys.stderr)
        sys.exit(130)
