"""Three operations Numba does not offer: array views without a reference count, a count of
trailing zero bits, and a cache prefetch.

:func:`unowned` serves the kernels' entry points.

Numba counts the references of every array it passes from one compiled function to
another, with an atomic add and subtract on the array's memory record at each call and
each view (``S[g]``).  A step of the core makes a few dozen such calls; their atomic
operations took about a fifth of a batch step's time in a profile.  :func:`unowned` gives a view of the same
memory with no memory record: the counting then returns at once.  It is safe only for
arrays that outlive the call, which holds for the arguments of a kernel called from
Python (the caller holds them) and for views of them made inside it.

:func:`trailing_zeros` walks the set bits of the meld tables (:mod:`.layout`) in order;
:func:`prefetch` brings the next games' rows closer while a batch step plays one.
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def unowned(typingctx, arr):
    """``arr`` itself, with its memory record (and so its reference counting) left out."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        value = args[0]
        return builder.insert_value(value, cgutils.get_null_value(value.type.elements[0]), 0)

    return arr(arr), codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """The number of zero bits below the lowest set bit of the integer ``x`` (``x`` not zero)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return x(x), codegen


@intrinsic
def prefetch(typingctx, arr, index):
    """Ask the CPU to bring the cache line holding ``arr[index]`` (``index`` in bounds, not negative)
    closer: a hint, with no effect on any value."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        voidptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [voidptr, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", (voidptr,), fnty)
        builder.call(fn, [builder.bitcast(ptr, voidptr), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.none(arr, index), codegen
