"""The kael-cuda project's PEP 517 backend: kael's shared one (python/build_backend/kael_wheel.py),
imported by its path, since pip accepts only a backend-path inside the project folder."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "build_backend"))

from kael_wheel import build_wheel, get_requires_for_build_wheel  # noqa: E402,F401
