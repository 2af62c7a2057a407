"""A hook for tests/engine/test_kill_resume.py: after the iteration ``$VASTMAT_TEST_PAUSE_AFTER_ITER`` (1-based; its
checkpoint, if any, already written) it creates the file ``$VASTMAT_TEST_PAUSE_SIGNAL`` and sleeps, so that the test
SIGKILLs the run at a known point instead of racing it."""
import os
import time

from mmengine.hooks import Hook

from vastmat.registry import HOOKS


@HOOKS.register_module()
class PauseAfterIterHook(Hook):
    priority = 'LOWEST'  # after CheckpointHook (VERY_LOW)

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        pause_after = int(os.environ.get('VASTMAT_TEST_PAUSE_AFTER_ITER', '0'))
        if pause_after and runner.iter + 1 == pause_after:
            with open(os.environ['VASTMAT_TEST_PAUSE_SIGNAL'], 'w') as f:
                f.write(str(runner.iter + 1))
            time.sleep(600)  # killed long before this ends
