"""What the vDSO patch benchmarks share: the reference target and the
engine's tool, driven as tests/integration/test_vdso_patch.py drives
them."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from test_vdso_patch import Target, Tool  # noqa: E402,F401


class Ctx:
    """The little of an integration test's context the drivers use."""

    def __init__(self, targets):
        self.targets = targets

    def target(self, name):
        return os.path.join(self.targets, name)
