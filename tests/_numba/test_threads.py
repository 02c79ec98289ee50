"""rffbench/_numba/threads.py: chunks on Python threads, one compiled entry per types."""

import numpy as np
import pytest


def test_the_records_name_numbas_threading_layer():
    """A timing is read with the threading layer it ran on: runtime_env names it once a
    parallel function has run (workqueue transformed 5-10x slower than OpenMP here)."""
    import numba

    from rffbench import runtime_env
    from rffbench.features import RandomFourierFeatures

    X = np.random.default_rng(0).standard_normal((64, 3))
    RandomFourierFeatures(kernel="gaussian", n_components=16, random_state=0).fit_transform(X)
    assert f"numba_layer={numba.threading_layer()}" in runtime_env()


def test_parallel_chunks_runs_each_chunk_once_on_at_most_the_threads():
    """Every chunk once, on numba.get_num_threads() threads at most (the caller's among
    them); one thread: all in the caller's, in order."""
    import threading

    import numba

    from rffbench._numba.threads import parallel_chunks

    seen = []
    parallel_chunks(37, lambda c: seen.append((c, threading.get_ident())))
    assert sorted(c for c, _ in seen) == list(range(37))
    assert len({t for _, t in seen}) <= numba.get_num_threads()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        seen.clear()
        parallel_chunks(5, lambda c: seen.append((c, threading.get_ident())))
    finally:
        numba.set_num_threads(before)
    assert seen == [(c, threading.get_ident()) for c in range(5)]


def test_parallel_chunks_raises_the_first_error_and_starts_no_chunk_after_it():
    import numba

    from rffbench._numba.threads import parallel_chunks

    started = []

    def body(c):
        started.append(c)
        if c == 5:
            raise ValueError("chunk 5")

    with pytest.raises(ValueError, match="chunk 5"):
        parallel_chunks(1000, body)
    assert 5 in started and len(started) <= 6 + numba.get_num_threads()


def test_entry_compiles_once_per_types_and_literal_code():
    """entry(): one version per argument types and literal value (a Literal[int] in its
    signature, as numba's own ``literally`` dispatch makes), found again without compiling."""
    import numba
    from numba import literally

    from rffbench._numba.threads import entry

    @numba.njit(nogil=True, cache=False)
    def scaled_sum(x, code):
        literally(code)
        return x.sum() * code

    x = np.arange(4.0)
    ep = entry(scaled_sum, (x, 3), literal=(1,))
    assert ep(x, 3) == 18.0
    assert entry(scaled_sum, (x + 1, 3), literal=(1,)) is ep
    assert len(scaled_sum.signatures) == 1
    assert "Literal[int](3)" in str(scaled_sum.signatures[0])
    ep2 = entry(scaled_sum, (x.astype(np.float32), 3), literal=(1,))
    ep3 = entry(scaled_sum, (x, 2), literal=(1,))
    assert ep2 is not ep and ep3 is not ep and ep3(x, 2) == 12.0
    assert ep2(x.astype(np.float32), 3) == 18.0 and len(scaled_sum.signatures) == 3
    strided = np.arange(8.0)[::2]  # another layout: another version, not ep's
    assert entry(scaled_sum, (strided, 3), literal=(1,)) is not ep
