"""Measurements: ``MEASUREMENTS[name](ctx, block_cfg) -> list of records``.

The name matches the config block ``measure.<name>``; a run calls every block
whose ``enabled`` is true, in this order.
"""
from . import approximation, timing

MEASUREMENTS = {
    "approximation": approximation.measure,
    "timing": timing.measure,
}
