"""Every detector procjudge runs, in the order their items are reported: an explicit list."""

from __future__ import annotations

from . import antipatterns, cheats, loop, practices, rules, signals, trajectory
from .base import Detector, Hit, detector

ALL: list[Detector] = [
    *trajectory.DETECTORS,
    *rules.DETECTORS,
    *loop.DETECTORS,
    *antipatterns.DETECTORS,
    *cheats.DETECTORS,
    *practices.DETECTORS,
    *signals.DETECTORS,
    *cheats.SIGNALS,
]

__all__ = ["ALL", "Detector", "Hit", "detector"]
