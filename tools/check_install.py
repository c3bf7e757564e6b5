"""Check that a non-editable install of this tree is whole and its hooks outlive the tree.

Copies the tree as git sees it (tracked and new files, nothing ignored) to a scratch folder,
``pip install``s that copy into a fresh venv (or, with ``--tool pipx`` / ``--tool uv``, makes a
tool install of it with that tool, wherever it is on PATH), deletes the copy, and checks with
the installed ``lineage`` alone:

- ``lineage --version`` answers;
- the package data is there: the web page (``serve/static``), the expected-file schema
  (``replay/expected.schema.json``), the fast hook script and its one sibling;
- ``lineage install-hooks claude`` (into a scratch HOME) writes a command naming only the
  install, and that command, run through a shell with a payload on stdin, exits 0 fast and
  the payload reaches the store (``lineage tree --all`` shows the session);
- ``lineage demo --replays`` (the tree's replays) fills a demo store of its own.

It takes 10-60 s (pip resolves the dependencies), so it is a tool, not a test. Exit status 0
when every check passed, 1 otherwise (each failure printed).

    python tools/check_install.py                 # pip install into a fresh venv
    python tools/check_install.py --tool pipx     # pipx install of the copy
    python tools/check_install.py --tool uv       # uv tool install of the copy
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Files the wheel must carry, relative to the installed package.
PACKAGE_DATA = (
    "serve/static/index.html",
    "serve/static/app.js",
    "serve/static/app.css",
    "replay/expected.schema.json",
    "hook_fast.py",
    "user_files.py",
    "py.typed",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tool", choices=("pip", "pipx", "uv"), default="pip")
    args = parser.parse_args(argv)
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lineage-install-") as scratch:
        base = Path(scratch)
        source = copy_tree(base / "src")
        home = base / "home"
        home.mkdir()
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_STATE_HOME": str(home / "state"),
            "PIPX_HOME": str(home / "pipx"),
            "PIPX_BIN_DIR": str(home / "bin"),
            "UV_TOOL_DIR": str(home / "uv-tools"),
            "UV_TOOL_BIN_DIR": str(home / "bin"),
        }
        env.pop("LINEAGE_STORE", None)
        started = time.perf_counter()
        lineage = install(args.tool, source, base, env)
        print(f"installed with {args.tool} in {time.perf_counter() - started:.1f} s")
        shutil.rmtree(source)  # the hooks must not need the tree they were installed from
        failures += check_package_data(lineage, env)
        failures += check_hooks(lineage, env, base)
        failures += check_demo(lineage, env, base)
    for failure in failures:
        print(f"FAIL {failure}")
    print("all checks passed" if not failures else f"{len(failures)} checks failed")
    return 1 if failures else 0


def copy_tree(target: Path) -> Path:
    """The tree's files as git sees them (tracked, and new ones not ignored) under ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            (target / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / os.fsdecode(name))
    return target


def install(tool: str, source: Path, base: Path, env: dict[str, str]) -> Path:
    """Install ``source`` with ``tool``; the installed ``lineage`` script's path."""
    if tool == "pip":
        venv = base / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(source)]
        subprocess.run(pip, check=True, env=env)
        return venv / "bin" / "lineage"
    found = shutil.which(tool)
    if found is None:
        raise SystemExit(f"{tool} is not on PATH: install it, or use --tool pip")
    command = [found, "install", str(source)] if tool == "pipx" else [found, "tool", "install"]
    if tool == "uv":
        command.append(str(source))
    subprocess.run(command, check=True, env=env, capture_output=True)
    return Path(env["PIPX_BIN_DIR"]) / "lineage"


def run(lineage: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(lineage), *args], capture_output=True, text=True, env=env, check=False
    )


def check_package_data(lineage: Path, env: dict[str, str]) -> list[str]:
    done = run(lineage, "--version", env=env)
    if done.returncode != 0:
        return [f"lineage --version exited {done.returncode}: {done.stderr.strip()}"]
    python = lineage.resolve().parent / "python"  # beside the script, in the install's venv
    where = subprocess.run(
        [str(python), "-c", "import lineage_es, os; print(os.path.dirname(lineage_es.__file__))"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.strip()
    missing = [name for name in PACKAGE_DATA if not (Path(where) / name).is_file()]
    return [f"the install lacks {name} (under {where})" for name in missing]


def check_hooks(lineage: Path, env: dict[str, str], base: Path) -> list[str]:
    store = f"sqlite:///{base / 'hooks.sqlite'}"
    done = run(lineage, "install-hooks", "claude", "--store", store, env=env)
    if done.returncode != 0:
        return [f"install-hooks exited {done.returncode}: {done.stderr.strip()}"]
    settings = json.loads((Path(env["HOME"]) / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    if str(ROOT) in command or str(base / "src") in command:
        return [f"the hook command names the source tree: {command}"]
    payload = {"session_id": "check-1", "hook_event_name": "SessionStart", "source": "startup"}
    floor = shlex.join([command.split()[0], "-S", "-c", "pass"])
    hook_times: list[float] = []
    floor_times: list[float] = []
    for _ in range(5):  # paired runs: the hook, then the bare interpreter, through a shell
        started = time.perf_counter()
        hooked = subprocess.run(
            ["/bin/sh", "-c", command],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            check=False,
        )
        hook_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", floor], env=env, check=True)
        floor_times.append(time.perf_counter() - started)
    took, bare = statistics.median(hook_times), statistics.median(floor_times)
    print(f"hook: median {took * 1000:.0f} ms, {took / bare:.2f}x `{floor}` ({bare * 1000:.0f} ms)")
    print(f"  {command}")
    if hooked.returncode != 0 or hooked.stdout:
        return [f"the hook exited {hooked.returncode} with {hooked.stdout!r}"]
    shown = run(lineage, "tree", "--all", "--store", store, env=env)
    if "check-1" not in shown.stdout:
        return [f"the hook's payload did not reach the store: {shown.stdout}{shown.stderr}"]
    return []


def check_demo(lineage: Path, env: dict[str, str], base: Path) -> list[str]:
    store = f"sqlite:///{base / 'demo.sqlite'}"
    done = run(lineage, "demo", "--store", store, "--replays", str(ROOT / "replays"), env=env)
    if done.returncode != 0 or f"demo store: {store}" not in done.stdout:
        return [f"lineage demo exited {done.returncode}: {done.stdout}{done.stderr}"]
    if (Path(env["XDG_DATA_HOME"]) / "lineage-es" / "journal.sqlite").exists():
        return ["lineage demo created the default journal"]
    return []


if __name__ == "__main__":
    sys.exit(main())
