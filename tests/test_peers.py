"""rffbench/peers.py: the peer libraries timed in a worker process of their own with the
same W and b, its arrays read without pickle."""
import pytest

from rffbench.peers import installed


@pytest.mark.parametrize("output", ["fresh", "out"])
def test_peer_worker_process_times_the_same_map(output, rng):
    """rffbench.peers: the arrays go to a worker process through .npy files and come back
    as one JSON line (here the numpy peer, installed everywhere); the worker computes the
    rff map of the same W and b."""
    import numpy as np

    from rffbench.peers import time_peer

    X = rng.standard_normal((300, 5))
    W = rng.standard_normal((5, 64))
    b = rng.uniform(0, 2 * np.pi, 64)
    t, spread, note, blas = time_peer("numpy", X, W, b, threads=1, repeats=3, output=output)
    assert t > 0 and spread >= 0 and "own process, same W and b" in note
    # the BLAS the worker ran, as threadpoolctl saw it there, its threads as limited
    assert blas.endswith("1 threads (numpy)") and note.endswith(f"; BLAS: {blas}")
    assert ("reused" in note) == (output == "out")
    if not installed("jax"):  # an optional peer that is absent: one line, no worker
        missing, _, why, blas = time_peer("jax", X, W, b, 1, 3)
        assert missing is None and "jax not installed" in why and blas is None
    with pytest.raises(ValueError, match="unknown peer 'tf'"):
        time_peer("tf", X, W, b, 1, 3)


def test_peer_worker_refuses_pickled_arrays(tmp_path):
    """The worker loads its arrays without pickle: an object array (which would need it)
    is refused, nothing is run."""
    import numpy as np

    from rffbench.peers import worker

    np.save(tmp_path / "X.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    np.save(tmp_path / "W.npy", np.ones((1, 2)))
    np.save(tmp_path / "b.npy", np.ones(2))
    with pytest.raises(ValueError, match="allow_pickle=False"):
        worker(str(tmp_path), "numpy", 1, 1, "fresh")
