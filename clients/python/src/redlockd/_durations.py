"""Seconds (float or timedelta) to and from google.protobuf.Duration."""
from __future__ import annotations

import datetime
from typing import Union

from google.protobuf.duration_pb2 import Duration

Seconds = Union[float, int, datetime.timedelta]


def seconds(value: Seconds) -> float:
    """A duration argument in seconds; accepts a number of seconds or a ``timedelta``."""
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    return float(value)


def to_proto(value: float) -> Duration:
    """Rounded to the nanosecond; negative values stay negative (the server rejects them)."""
    d = Duration()
    d.FromNanoseconds(round(value * 1e9))
    return d


def from_proto(d: Duration) -> float:
    return float(d.seconds + d.nanos / 1e9)
