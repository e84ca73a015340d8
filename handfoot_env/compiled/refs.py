"""Array views without a reference count, for the kernels' entry points.

Numba counts the references of every array it passes from one compiled function to
another, with an atomic add and subtract on the array's memory record at each call and
each view (``S[g]``).  A step of the core makes a few dozen such calls, and the atomic
operations cost more than the rules themselves.  :func:`unowned` gives a view of the same
memory with no memory record: the counting then returns at once.  It is safe only for
arrays that outlive the call, which holds for the arguments of a kernel called from
Python (the caller holds them) and for views of them made inside it.
"""
from __future__ import annotations

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
