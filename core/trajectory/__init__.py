"""Trajectories: the live writer, the final file and one loader for every format (SPEC §9)."""

from __future__ import annotations

from ..messages import ModelStats
from .errors import TrajectoryError
from .loader import load_trajectory
from .model import MetaEvent, Step, Trajectory, TrajectoryInfo

__all__ = ["MetaEvent", "ModelStats", "Step", "Trajectory", "TrajectoryError", "TrajectoryInfo", "load_trajectory"]
