"""A monotonic clock inside compiled code, which numba's cache can keep.

numba has no clock. Reading one through a ctypes function pointer works, but a kernel that holds
a pointer of this process cannot be cached, so every process compiled the boosting loop anew.
:func:`monotonic` instead emits a call to libc's ``clock_gettime`` by its symbol name, resolved
when the cached code is loaded, as numba resolves its own helpers.

The clock is ``CLOCK_MONOTONIC``, the one ``time.perf_counter`` reads on Linux, and the seconds are
``tv_sec + tv_nsec * 1e-9``. :data:`AVAILABLE` is False where there is no such clock (Windows) or
``struct timespec`` is not two 64-bit integers: there, the caller does not use compiled timing.
"""

import ctypes
import time

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: The clock's id on this platform (None: no ``clock_gettime``)
CLOCK_ID = getattr(time, "CLOCK_MONOTONIC", None)
#: Whether :func:`monotonic` can be used here
AVAILABLE = CLOCK_ID is not None and ctypes.sizeof(ctypes.c_long) == 8


@intrinsic
def monotonic(typingctx):
    """Seconds of ``CLOCK_MONOTONIC`` as a float64 (only where :data:`AVAILABLE`)."""

    def codegen(context, builder, signature, args):
        i32, i64, f64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        clock_gettime = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        ts = cgutils.alloca_once(builder, timespec)
        builder.call(clock_gettime, [ir.Constant(i32, CLOCK_ID or 0), ts])
        sec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 0))
        nsec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 1))
        nsec_s = builder.fmul(builder.sitofp(nsec, f64), ir.Constant(f64, 1e-9))
        return builder.fadd(builder.sitofp(sec, f64), nsec_s)

    return types.float64(), codegen
