"""Every detector procjudge runs, in the order their items are reported: an explicit list."""

from __future__ import annotations

from . import antipatterns, practices, rules, signals, trajectory
from .base import Detector, Hit, detector

ALL: list[Detector] = [
    *trajectory.DETECTORS,
    *rules.DETECTORS,
    *antipatterns.DETECTORS,
    *practices.DETECTORS,
    *signals.DETECTORS,
]

__all__ = ["ALL", "Detector", "Hit", "detector"]
