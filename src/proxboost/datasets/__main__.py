"""``python -m proxboost.datasets [--prefetch] [--docs] [--mirror DIR] [--data-home DIR]``.

Lists every dataset with n, d, task, availability, source and licence; ``--prefetch``
copies (from the mirror) or downloads every real dataset into the cache, skipping the
unavailable ones with a message. Exit code 0, or 1 if a file was refused (checksum or size
check).
"""

from __future__ import annotations

import argparse
import sys

from ._files import get_data_home, get_mirror, locate
from ._registry import _ENTRIES, dataset_info, list_datasets, prefetch


def _availability(name: str, mirror, data_home) -> str:
    entry = _ENTRIES[name]
    if entry.info.synthetic:
        return "generated"
    places = [locate(name, f, mirror, data_home) for f in entry.data_files]
    if any(p is None for p in places):
        return "MISSING"
    return "cache" if all(origin == "cache" for _, origin in places) else "mirror"


def _table(mirror, data_home) -> str:
    header = ("id", "task", "n", "d", "available", "source", "licence")
    rows = [header]
    for name in list_datasets():
        info = dataset_info(name)
        rows.append((
            name, info.task, "-" if info.n is None else str(info.n),
            "-" if info.d is None else str(info.d), _availability(name, mirror, data_home),
            info.source, info.licence,
        ))
    widths = [max(len(row[j]) for row in rows) for j in range(len(header) - 1)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths)) + "  " + row[-1]
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


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
            mirror=mirror, data_home=data_home, download=False if args.offline else None,
            docs=args.docs,
        )
        code = 1 if "failed" in statuses.values() else 0
        print()
    print(_table(mirror, data_home))
    return code


if __name__ == "__main__":
    sys.exit(main())
