"""A malicious checkpoint's payload, shared by the checkpoint tests (tests/engine/test_checkpoint.py) and the tools'
(tests/tools/test_train_test.py)."""
import os


class SystemCallPayload:
    """Pickles to ``os.system(command)``: what a malicious checkpoint does."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)
