"""rffbench.cuda.timing: the first call apart, the device clock's repeats (none on the
simulator, which has no device clock); the copies by the host's clock (rffbench.clock)."""
import numpy as np

from rffbench.clock import time_call
from rffbench.cuda import device_code as ck
from rffbench.cuda import simulated
from rffbench.cuda.timing import device_times


def test_device_times_calls_once_then_repeats():
    calls = []
    X = np.ones((3, 2))

    def fn():
        calls.append(1)
        return ck.cos_offset_scale(ck.to_device(X), np.zeros(2), 1.0)

    first, med, spread = device_times(fn, 4)
    assert len(calls) == 5 and first > 0
    if simulated():
        assert med is None and spread is None
    else:
        assert med > 0 and 0 <= spread <= 100 * med


def test_a_copy_is_timed_by_the_hosts_clock():
    """The copies (h2d_time_s, d2h_time_s) go through rffbench.clock.time_call."""
    dX = ck.to_device(np.ones((4, 3)))
    med, spread = time_call(lambda: ck.to_host(dX), 3)
    assert med > 0 and spread >= 0
    np.testing.assert_array_equal(ck.to_host(dX), np.ones((4, 3)))
