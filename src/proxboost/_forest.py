"""A model's fitted trees and their leaf values, kept as the boosting loops leave them.

A compiled loop (:mod:`proxboost._compiled_loop`, :mod:`proxboost._compiled_multi`) writes the
nodes of all its trees end to end into one set of arrays and their leaf values end to end into
one array. The forest keeps that output as one :class:`Block` (the arrays, each tree's span of
them and its first row of leaf values) and makes the Python objects a user reads,
``estimators_`` (one tree object per tree) and ``leaf_values_`` (one view per tree), only when
they are first read; a model's prediction, staged predictions and importances read the blocks
(:meth:`Forest.runs`) and never need them. Making those 2,000 objects at the end of every fit
of 1,000 trees, and freeing them at the next, took 0.6-1.2 ms of a crabs fit of 10.5 ms.

The Python loop grows its trees one at a time, each owning its arrays: they are kept as they
come (a :class:`Loose` segment). Warm start adds segments after the ones of the fits before.
"""

from __future__ import annotations

import numpy as np

from proxboost.engines._packed import PackedNodes


class Block:
    """The trees of one compiled loop: ``kind`` (their ``PackedNodes`` class), ``arrays`` (the
    node arrays they share, in ``kind.FIELDS`` order), ``spans`` ((n, 3) int64 per tree: first
    node, end node, first row of leaf values), ``n_leaves`` ((n,) intp), ``values`` (the leaf
    values end to end: one row per leaf, (rows,) or (rows, K)) and ``extra`` (attributes every
    tree carries, e.g. ``hist``'s ``missing_bin``). The tree objects and leaf-value views are
    made on the first read and kept (never pickled: they are made again from the arrays, which
    they share)."""

    __slots__ = ("kind", "arrays", "spans", "n_leaves", "values", "extra", "_trees", "_values")

    def __init__(self, kind, arrays, spans, n_leaves, values, extra):
        self.kind, self.arrays, self.extra = kind, tuple(arrays), dict(extra)
        self.spans, self.n_leaves, self.values = spans, n_leaves, values
        self._trees = self._values = None

    def __len__(self):
        return len(self.spans)

    def trees(self):
        """One tree object per tree (``kind.spans``), made on the first call and kept."""
        if self._trees is None:
            self._trees = self._make(0, len(self))
        return self._trees

    def leaf_values(self):
        """One view of ``values`` per tree (its leaves' rows), made on the first call and kept."""
        if self._values is None:
            starts = self.spans[:, 2].tolist()
            ends = starts[1:] + [len(self.values)]
            values = self.values
            self._values = [values[start:stop] for start, stop in zip(starts, ends, strict=True)]
        return self._values

    def head(self, k):
        """A tree object of this block (tree k), without making the others: the holder of the
        arrays that the engine's compiled calls read (``PackedNodes._add_group``)."""
        return self._trees[k] if self._trees is not None else self._make(k, k + 1)[0]

    def _make(self, first, stop):
        spans = self.spans[first:stop]
        trees = self.kind.spans(
            self.arrays,
            spans[:, 0].tolist(),
            spans[:, 1].tolist(),
            self.n_leaves[first:stop].tolist(),
        )
        for name, value in self.extra.items():
            for tree in trees:
                setattr(tree, name, value)
        return trees

    def runs(self, first, stop, with_values):
        """The run of trees[first:stop] (they share their arrays): (first, stop, spans, values,
        head) as :meth:`Forest.runs` gives it, positions in this block."""
        spans = self.spans[first:stop].copy()
        values = None
        if with_values:
            row0 = int(spans[0, 2])
            row1 = int(self.spans[stop, 2]) if stop < len(self) else len(self.values)
            spans[:, 2] -= row0
            values = np.ascontiguousarray(self.values[row0:row1], dtype=np.float64)
            values = values.reshape(len(values), -1)
        yield first, stop, spans, values, self.head(first)

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__ if name[0] != "_"}

    def __setstate__(self, state):
        for name, value in state.items():
            setattr(self, name, value)
        self._trees = self._values = None


class Loose:
    """Trees grown one at a time (the Python loop), each with its leaf values, as lists."""

    __slots__ = ("tree_list", "value_list")

    def __init__(self):
        self.tree_list, self.value_list = [], []

    def __len__(self):
        return len(self.tree_list)

    def trees(self):
        return self.tree_list

    def leaf_values(self):
        return self.value_list

    @property
    def n_leaves(self):
        return np.array([tree.n_leaves for tree in self.tree_list], dtype=np.intp)

    def runs(self, first, stop, with_values):
        """Per run of consecutive trees[first:stop] sharing their arrays (trees a Python loop
        grew each own theirs; trees of a model pickled before the blocks share a loop's):
        (first, stop, spans, values, head), positions in this segment."""
        trees = self.tree_list
        while first < stop:
            end = first + 1
            while end < stop and trees[end]._shares_arrays(trees[first]):
                end += 1
            group = trees[first:end]
            spans = np.zeros((end - first, 3), np.int64)
            spans[:, 0] = [tree._start for tree in group]
            spans[:, 1] = [tree._stop for tree in group]
            values = None
            if with_values:
                leaf_values = self.value_list[first:end]
                np.cumsum([len(c) for c in leaf_values[:-1]], out=spans[1:, 2])
                values = np.concatenate(leaf_values).astype(np.float64, copy=False)
                values = values.reshape(len(values), -1)
            yield first, end, spans, values, trees[first]
            first = end

    def __getstate__(self):
        return {"tree_list": self.tree_list, "value_list": self.value_list}

    def __setstate__(self, state):
        self.tree_list, self.value_list = state["tree_list"], state["value_list"]


class Forest:
    """The fitted trees and leaf values of a model, in order, as segments (:class:`Block`,
    :class:`Loose`). ``trees()`` and ``leaf_values()`` give them as lists (``estimators_``,
    ``leaf_values_``: the same list objects until the forest grows); ``runs`` gives them to
    the engines' compiled calls."""

    __slots__ = ("segments", "_lists")

    def __init__(self, segments=()):
        self.segments = list(segments)
        self._lists = None

    def __len__(self):
        return sum(len(segment) for segment in self.segments)

    def append(self, tree, values):
        """One tree grown by the Python loop and its leaf values."""
        if not (self.segments and isinstance(self.segments[-1], Loose)):
            self.segments.append(Loose())
        self.segments[-1].tree_list.append(tree)
        self.segments[-1].value_list.append(values)
        self._lists = None

    def add_block(self, block):
        """The trees of one compiled loop."""
        self.segments.append(block)
        self._lists = None

    def trees(self):
        return self._both()[0]

    def leaf_values(self):
        return self._both()[1]

    def _both(self):
        if self._lists is None:
            trees, values = [], []
            for segment in self.segments:
                trees.extend(segment.trees())
                values.extend(segment.leaf_values())
            self._lists = (trees, values)
        return self._lists

    def n_leaves(self):
        """Each tree's number of leaves, (n_trees,) intp."""
        parts = [np.asarray(segment.n_leaves, dtype=np.intp) for segment in self.segments]
        return np.concatenate(parts) if parts else np.zeros(0, np.intp)

    def kind(self):
        """The trees' ``PackedNodes`` class when they are all of one (a model that the engines'
        compiled calls can predict), else None (one Python call per tree: the ``sklearn``
        engine)."""
        kinds = set()
        for segment in self.segments:
            if isinstance(segment, Block):
                kinds.add(segment.kind)
            else:
                kinds.update(type(tree) for tree in segment.tree_list)
        if len(kinds) != 1:
            return None
        (kind,) = kinds
        return kind if issubclass(kind, PackedNodes) else None

    def runs(self, first=0, stop=None, with_values=True):
        """Per run of consecutive trees of trees[first:stop] that share their node arrays (all
        the trees of one compiled loop; each tree of the Python loop alone): (first, stop,
        spans, values, head). ``spans``: (n, 3) int64, per tree its first node, end node and
        first row in ``values``; ``values``: the run's leaf values end to end, one row of K per
        leaf, float64 (None unless ``with_values``); ``head``: a tree object holding the run's
        arrays; first and stop count from the first tree of the model."""
        stop = len(self) if stop is None else stop
        offset = 0
        for segment in self.segments:
            n = len(segment)
            lo, hi = max(first - offset, 0), min(stop - offset, n)
            if lo < hi:
                for a, b, spans, values, head in segment.runs(lo, hi, with_values):
                    yield a + offset, b + offset, spans, values, head
            offset += n

    def __getstate__(self):
        return {"segments": self.segments}

    def __setstate__(self, state):
        self.segments, self._lists = state["segments"], None

    @classmethod
    def of_lists(cls, trees, leaf_values):
        """A forest of given trees and leaf values (a model pickled before forests)."""
        forest = cls()
        for tree, values in zip(trees, leaf_values, strict=True):
            forest.append(tree, values)
        return forest
