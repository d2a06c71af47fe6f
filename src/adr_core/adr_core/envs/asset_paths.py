"""Where the envs' model files live (shipped as package data under ``adr_core/envs/assets``)."""
from __future__ import annotations

from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent / "assets"
PUSHER3DOF_MJCF = ASSETS_DIR / "pusher3dof.xml"
ERGO_JR_URDF = ASSETS_DIR / "poppy_ergo_jr.urdf"
ERGO_PUSHER_TABLE_URDF = ASSETS_DIR / "ergo_pusher_scene.urdf"
