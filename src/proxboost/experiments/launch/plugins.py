"""The ``plugins`` key of ``run.py``: the user's modules imported before a run is planned, so
that their ``register_loss``, ``register_dataset`` and ``register_method`` calls take effect
(``docs/extending.md``)."""

from __future__ import annotations

import importlib

__all__ = ["import_plugins"]


def import_plugins(names) -> None:
    """Import each module of ``names`` (a list of module names; None or [] imports nothing).
    A name that is not a module name, or a module that cannot be imported, raises a
    ``ValueError`` of one line naming it and what to do."""
    if names is None:
        return
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"plugins must be a list of module names, got {names!r}")
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):  # the plugin itself is missing
                raise ValueError(
                    f"plugins: no module named {name!r}; put its folder on PYTHONPATH (or start"
                    " run.py in it)"
                ) from None
            raise ValueError(f"plugins: {name!r} failed to import: {exc}") from None
        except ValueError as exc:  # a register_* call refused: its own line
            raise ValueError(f"plugins: {name!r}: {exc}") from None
