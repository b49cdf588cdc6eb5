"""What the benchmark scripts share: the run's stamp (date, commit, machine, load) and writing a
measured table into a docs page between two markers (``--write-docs``).

The scripts run as ``python benchmarks/<script>.py``, so this module is imported from their own
folder (not part of the package)."""

import os
import platform
import re
import subprocess

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def commit() -> str:
    """The checkout's short commit, "unknown" outside git."""
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    )
    return out.stdout.strip() or "unknown"


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def load() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def write_between_markers(page: str, marker: str, text: str) -> None:
    """Replace what lies between ``<!-- marker -->`` and ``<!-- /marker -->`` in ``docs/<page>``
    by ``text``; exits with one line when the page lacks the two markers."""
    path = os.path.join(REPO, "docs", page)
    with open(path) as f:
        content = f.read()
    pattern = rf"(<!-- {re.escape(marker)} -->\n).*?(<!-- /{re.escape(marker)} -->)"
    new, count = re.subn(pattern, lambda m: m[1] + text + "\n" + m[2], content, flags=re.S)
    if count != 1:
        raise SystemExit(f"docs/{page} has no {marker} markers: add <!-- {marker} --> and its end")
    with open(path, "w") as f:
        f.write(new)
    print(f"wrote the table into docs/{page}")
