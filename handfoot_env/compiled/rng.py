"""Python's ``random.Random`` (MT19937) in compiled code, draw for draw.

The compiled core deals exactly the shoes of :class:`handfoot_env.engine.Game`:
``Random(seed)`` seeded from a non-negative integer (``init_by_array`` over its
32-bit words), ``getrandbits``, ``randrange(n)`` (``_randbelow``: rejection on
``n.bit_length()`` bits) and ``shuffle`` as CPython implements them.
tests/test_compiled_core.py checks the sequences against :mod:`random`.
"""
from __future__ import annotations

import numpy as np
from . import kernel

N = 624
M = 397
MASK32 = np.uint64(0xFFFFFFFF)


def _init_genrand(s: int) -> np.ndarray:
    """MT19937's ``init_genrand(s)``: the state every ``init_by_array`` starts from (with s = 19650218)."""
    mt = [s & 0xFFFFFFFF]
    for i in range(1, N):
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.asarray(mt, dtype=np.int64)


INIT_19650218 = _init_genrand(19650218)


@kernel
def seeded(seed):
    """A generator state (625 int64: 624 words and the index) seeded like ``random.Random(seed)``, seed >= 0."""
    st = np.zeros(N + 1, dtype=np.int64)
    mt = st[:N]
    key = np.zeros(2, dtype=np.int64)
    nkey = 0
    x = seed
    while x > 0:
        key[nkey] = x & 0xFFFFFFFF
        nkey += 1
        x >>= 32
    if nkey == 0:
        nkey = 1
    mt[:] = INIT_19650218
    i, j = 1, 0
    k = N if N > nkey else nkey
    while k > 0:
        prev = mt[i - 1]
        mt[i] = ((mt[i] ^ (((prev ^ (prev >> 30)) * 1664525) & 0xFFFFFFFF)) + key[j] + j) & 0xFFFFFFFF
        i += 1
        j += 1
        if i >= N:
            mt[0] = mt[N - 1]
            i = 1
        if j >= nkey:
            j = 0
        k -= 1
    k = N - 1
    while k > 0:
        prev = mt[i - 1]
        mt[i] = ((mt[i] ^ (((prev ^ (prev >> 30)) * 1566083941) & 0xFFFFFFFF)) - i) & 0xFFFFFFFF
        i += 1
        if i >= N:
            mt[0] = mt[N - 1]
            i = 1
        k -= 1
    mt[0] = 0x80000000
    st[N] = N
    return st


@kernel
def _next32(st):
    mt = st
    if st[N] >= N:
        for kk in range(N - M):
            y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7FFFFFFF)
            mt[kk] = mt[kk + M] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
        for kk in range(N - M, N - 1):
            y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7FFFFFFF)
            mt[kk] = mt[kk + M - N] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
        y = (mt[N - 1] & 0x80000000) | (mt[0] & 0x7FFFFFFF)
        mt[N - 1] = mt[M - 1] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
        st[N] = 0
    y = mt[st[N]]
    st[N] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & 0xFFFFFFFF


@kernel
def getrandbits(st, k):
    """``Random.getrandbits(k)`` for 1 <= k <= 63."""
    if k <= 32:
        return _next32(st) >> (32 - k)
    lo = _next32(st)
    hi = _next32(st) >> (64 - k)
    return lo | (hi << 32)


@kernel
def randbelow(st, n):
    """``Random.randrange(n)`` (``_randbelow``) for 1 <= n < 2**63."""
    k = 0
    x = n
    while x > 0:
        k += 1
        x >>= 1
    r = getrandbits(st, k)
    while r >= n:
        r = getrandbits(st, k)
    return r


@kernel
def shuffle(st, a, start, stop):
    """``Random.shuffle`` of ``a[start:stop]`` in place."""
    n = stop - start
    for i in range(n - 1, 0, -1):
        j = randbelow(st, i + 1)
        t = a[start + i]
        a[start + i] = a[start + j]
        a[start + j] = t
