"""Measurements: ``MEASUREMENTS[name]`` is a module with

* ``measure(ctx, block_cfg) -> list of records`` (it may also put extra
  tables into ``ctx.tables[file_name]``, written next to records.csv), and
* optionally ``check(ctx, block_cfg)``: raises ConfigError for a request that
  cannot be met with this data (sizes, memory).  Every enabled block's check
  runs after the data is loaded and before any measurement starts.

The name matches the config block ``measure.<name>``; a run calls every block
whose ``enabled`` is true, in this order.
"""
from . import approximation, bounds, learning, speed, timing, variance

MEASUREMENTS = {
    "approximation": approximation,
    "bounds": bounds,
    "learning": learning,
    "speed": speed,
    "timing": timing,
    "variance": variance,
}
