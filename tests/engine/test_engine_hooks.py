"""The runner hooks of vastmat.engine.hooks that pace and show training: adaptive CPU threads, plain progress lines."""
import types

import torch

from vastmat.engine import hooks


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _runner():
    logger = types.SimpleNamespace(info=lambda message: None)
    return types.SimpleNamespace(iter=0, max_iters=10_000, logger=logger)


def test_adaptive_threads_fall_back_to_one_thread_when_slowed_and_retry(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(hooks.time, 'perf_counter', clock)
    threads = []
    monkeypatch.setattr(torch, 'set_num_threads', threads.append)
    monkeypatch.setattr(torch, 'get_num_threads', lambda: 2)
    hook, runner = hooks.AdaptiveThreadsHook(window=5, slowdown=1.8, retry_every=20), _runner()
    hook.before_train(runner)

    def run(iterations, seconds_each):
        for _ in range(iterations):
            clock.now += seconds_each
            hook.after_train_iter(runner, runner.iter)
            runner.iter += 1

    run(5, 1.0)  # warm-up window: ignored
    run(10, 0.2)  # alone: the pace to hold
    assert hook.switches == []
    run(5, 0.3)  # a little slower: within the allowed slowdown
    assert hook.switches == []
    run(5, 0.9)  # another process took a core: 4.5x slower
    assert hook.switches == [(25, 1)] and threads[-1] == 1
    run(20, 0.27)  # one thread until the retry
    assert hook.switches[-1] == (45, 2)
    run(5, 0.9)  # still shared: back to one thread
    assert hook.switches[-1] == (50, 1)
    run(20, 0.27)
    run(5, 0.2)  # alone again: two threads stay
    assert hook.switches[-1] == (70, 2)
    run(10, 0.2)
    assert hook.switches[-1] == (70, 2)
    hook.after_train(runner)
    assert threads[-1] == 2  # restored


def test_progress_lines_when_not_a_terminal(monkeypatch, capsys):
    clock = FakeClock()
    monkeypatch.setattr(hooks.time, 'perf_counter', clock)
    hook, runner = hooks.ProgressBarHook('  model', line_seconds=30), _runner()
    runner.max_iters = 100
    hook.before_train(runner)
    for _ in range(100):
        clock.now += 1.0
        hook.after_train_iter(runner, 0)
        runner.iter += 1
    hook.after_train(runner)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == 'model training: 0/100'
    assert lines[1] == 'model training: 30/100, 30 s elapsed, about 70 s left'
    assert len(lines) == 5 and lines[-1].startswith('model training: 100/100, 100 s elapsed')
