"""The node arrays of a fitted tree, held as a span of arrays that many trees may share.

A compiled boosting loop (:mod:`proxboost._compiled_loop`) writes the nodes of all its trees end
to end into one set of arrays; each fitted tree is then the span ``[start, stop)`` of them, and
its fields (``feature``, ``threshold``, ...) are views cut the first time the tree is read (and
kept). Cutting the eight views of each of 1,000 trees when the fit ends cost about 3 ms, a
sixth of a whole fit on a small dataset; one small object per tree costs a tenth of that, and
the model's forest (:mod:`proxboost._forest`) makes even those only when ``estimators_`` is
read. A tree grown alone owns its arrays (the span is all of them). Either way a field is the
same view of the same numbers.

A model's prediction and its staged predictions read no field: they hand each run of trees
sharing their arrays (``Forest.runs``) to the engine's compiled ``add_trees`` or
``stage_trees`` whole (:meth:`PackedNodes.add_trees`, :meth:`PackedNodes.stage_trees`), one
call where each tree cost a Python call of its own.

Pickling keeps the sharing (pickle writes an object shared by many trees once), so a model's
pickle holds each array once too.
"""

from __future__ import annotations

import numpy as np

from proxboost.engines._nodes import split_gains


def _field(index: int, doc: str) -> property:
    """A read-only attribute: entry ``index`` of the tree's arrays, cut to its span."""

    def read(self):
        return self._fields()[index]

    return property(read, doc=doc)


class PackedNodes:
    """Base of the engines' fitted trees: ``_arrays`` (a tuple in the subclass's ``FIELDS``
    order), the span ``_start:_stop`` of them holding this tree, and ``n_leaves``. Each name of
    ``FIELDS`` becomes a read-only attribute (a subclass declares ``FIELDS``, a dict of field
    name to its description, and nothing else about them); every tree has ``feature``,
    ``left`` and ``gain`` fields, from which ``split_feature`` and ``split_gain`` follow."""

    __slots__ = ("_arrays", "_start", "_stop", "n_leaves", "_views")
    #: field name -> description, in ``_arrays``' order
    FIELDS: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for index, (name, doc) in enumerate(cls.FIELDS.items()):
            setattr(cls, name, _field(index, doc))

    def _own(self, arrays, n_leaves):
        """Hold ``arrays`` (the tree's own, in ``FIELDS`` order) whole."""
        self._arrays = tuple(arrays)
        self._start, self._stop = 0, len(self._arrays[0])
        self.n_leaves = int(n_leaves)
        self._views = None

    def _fields(self):
        """Every field's view, in ``FIELDS`` order: cut on the first read, then kept."""
        views = self._views
        if views is None:
            start, stop = self._start, self._stop
            views = self._views = tuple(array[start:stop] for array in self._arrays)
        return views

    @classmethod
    def spans(cls, arrays, starts, ends, n_leaves):
        """One tree per span: tree k holds ``arrays[i][starts[k]:ends[k]]`` and ``n_leaves[k]``
        leaves (``starts``, ``ends``, ``n_leaves``: lists of ints). The trees share ``arrays``,
        which must not be modified afterwards."""
        arrays = tuple(arrays)
        assert len(arrays) == len(cls.FIELDS), (len(arrays), cls.FIELDS)
        new = object.__new__
        trees = []
        for start, stop, leaves in zip(starts, ends, n_leaves, strict=True):
            tree = new(cls)
            tree._arrays, tree._start, tree._stop, tree.n_leaves = arrays, start, stop, leaves
            tree._views = None
            trees.append(tree)
        return trees

    @staticmethod
    def add_trees(Xp, forest, weights, F, threads=1):
        """F += weights[t] * leaf_values[t][trees[t].apply(Xp)] for every tree of ``forest``
        (``proxboost._forest.Forest``) in order, in one compiled call per run of consecutive
        trees sharing their arrays (all the trees of one compiled loop) instead of one Python
        call per tree: the same numbers, each entry of F getting the same products added in
        the same order. ``F``: float64, (n,) or (n, K) with (n_leaves, K) leaf values.
        ``threads`` > 1: chunks of rows on that many threads (to be called under
        ``_threads.numba_threads``), each row through the trees in the same order: the same
        numbers."""
        F2 = F.reshape(F.shape[0], -1)  # a view: (n, 1) for one value per leaf
        for first, stop, spans, values, head in forest.runs():
            w = np.ascontiguousarray(weights[first:stop], dtype=np.float64)
            head._add_group(Xp, spans, values, w, F2, threads)

    @staticmethod
    def stage_trees(Xp, forest, first, stop, alphas, FH, out):
        """out[t - first] = the prediction after tree t of ``forest`` (``staged_predict``),
        for t in [first, stop), tree after tree from the model's F and H (``FH``: float64,
        (n, K) each, updated): f = H + c[leaves], then H = f + alpha (f - F) (f where alpha
        is 0) and F = f, entry by entry as the Python recursion computes it; one compiled
        call per run of trees sharing their arrays. ``alphas``: every tree's; ``out``:
        (stop - first, n, K)."""
        for a, b, spans, values, head in forest.runs(first, stop):
            alpha = np.ascontiguousarray(alphas[a:b], dtype=np.float64)
            head._stage_group(Xp, spans, values, alpha, FH, out[a - first : b - first])

    @staticmethod
    def gains_by_feature(forest, n_features):
        """(len(forest), n_features): per tree, its split gains summed by feature, each sum in
        node order as ``np.bincount(tree.split_feature, tree.split_gain)`` adds it (the same
        numbers), one compiled call per run of trees sharing their arrays."""
        out = np.zeros((len(forest), n_features))
        for first, stop, spans, _, head in forest.runs(with_values=False):
            at = {name: k for k, name in enumerate(head.FIELDS)}
            arrays = head._arrays
            feature, left, gain = arrays[at["feature"]], arrays[at["left"]], arrays[at["gain"]]
            split_gains(feature, left, np.asarray(gain, np.float64), spans, out[first:stop])
        return out

    def _shares_arrays(self, other):
        """Whether this tree reads the same arrays as ``other`` (and so the same kernel call)."""
        return self._arrays is other._arrays

    def _add_group(self, Xp, spans, values, weights, F, threads):
        """Add the trees of ``spans`` (rows: first node, end node, first leaf value) in this
        tree's arrays to F (the engine's compiled ``add_trees``, on ``threads`` threads)."""
        raise NotImplementedError

    def _stage_group(self, Xp, spans, values, alphas, FH, out):
        """The staged predictions of the trees of ``spans`` in this tree's arrays (the engine's
        compiled ``stage_trees``)."""
        raise NotImplementedError

    @property
    def node_count(self):
        return self._stop - self._start

    @property
    def split_feature(self):
        return self.feature[self.left >= 0].astype(np.intp)

    @property
    def split_gain(self):
        return self.gain[self.left >= 0]

    def _slots(self):
        return [name for cls in type(self).__mro__ for name in getattr(cls, "__slots__", ())]

    def __getstate__(self):  # the views are cut again after loading
        return {name: getattr(self, name) for name in self._slots() if name != "_views"}

    def __setstate__(self, state):
        self._views = None
        if "_arrays" not in state:  # pickled before the arrays were packed: one entry per field
            self._own(tuple(state[name] for name in self.FIELDS), state["n_leaves"])
        for name in self._slots():
            if name in state and name not in self.FIELDS:
                setattr(self, name, state[name])
