"""An atomic counter for compiled code: threads of a parallel region take work items one at a
time (dynamic scheduling), which numba's ``prange`` does not offer on the ``omp`` layer."""

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def fetch_add(typingctx, counters, i):
    """counters[i] += 1 atomically; returns the value before (an int64 1-D array)."""
    if not (isinstance(counters, types.Array) and counters.dtype == types.int64):
        return None
    if counters.ndim != 1 or not isinstance(i, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        array = context.make_array(array_type)(context, builder, args[0])
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, array_type, array, [index])
        one = context.get_constant(types.int64, 1)
        return builder.atomic_rmw("add", ptr, one, "monotonic")

    return types.int64(counters, i), codegen
