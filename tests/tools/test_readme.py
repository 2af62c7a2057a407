"""Every command of the ```bash blocks of README.md and of the pages under docs/ runs, in order, in a scratch copy of
the repository's working layout; every page of docs/ is linked from README.md, and every relative link resolves.

The quick ones run as written; the long ones (detector training, the zoo benchmark) run with the tiny settings of
:data:`TINY`. ``python tools/X.py ...`` and setup.cfg's console scripts run in this process (``tool``, the entry
point's function; after a ``pip install`` into the chain's private site, with the plugins it installed loaded as a
new process would load them), other commands (shell scripts, pip) as subprocesses. A command that needs a GPU, a
Slurm cluster or ../shared/data is given the nearest local form here (``srun`` is a stand-in that runs the task as
one local Slurm task, in this process; the two-machine torchrun's arguments are recorded and checked;
tools/dist_train.sh and tools/dist_test.sh on one machine run their torchrun's ranks as forked processes). After each
chain, :data:`CHECKS` checks what its commands left behind (the two-process runs against the one-process ones among
them).
"""
import glob
import json
import os
import os.path as osp
import re
import shlex
import subprocess
import sys
import time

import pytest
import torch

from helpers.common import (REPO, SHARED_DATA, forked_ranks, free_port, plugin_registrations_undone, plugins_from,
                            tool)

DOCS = osp.join(REPO, 'docs')
DEMO_ITERS = 1200  # the demo YOLOX's schedule (configs/yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py)
# docs/trackers.md's tiny models -> their schedules: the chain trains them 2 iterations (their whole schedules, resumed,
# are tests/models/mot/test_<name>.py's)
TINY_MODEL_ITERS = {'qdtrack': 16, 'fairmot': 8, 'transtrack': 8, 'motip': 8}
TWO_ITERATIONS = '{command} --cfg-options train_cfg.max_iters=2 default_hooks.checkpoint.interval=2'

# a command of the pages (its start) -> (the command, or the list of commands, the test runs instead, why); None: not
# run, with the reason
TINY = {
    'make test': (None, 'the test suite itself'),
    # (before 'make demo': the first prefix that matches is taken)
    'make demo ZOO_ARGS="--trackers NearestCentre ByteTrack"': (
        ['python tools/data/make_demo_data.py --out data/demo --frames 12',
         'python tools/data/simulate_detections.py --data-root data/demo --split protocol1/test '
         '--out work_dirs/zoo_benchmark/protocol1/dets',
         'python tools/zoo_benchmark.py --trackers NearestCentre ByteTrack '
         '--det-root work_dirs/zoo_benchmark/protocol1/dets --workers 1'],
        "docs/plugins.md's zoo run on 12-frame demo videos and simulated detections of their ground truth, written "
        "where the zoo's detector writes its boxes (a 2-iteration YOLOX finds none: every HOTA would be 0)"),
    'python tools/zoo_benchmark.py --work-dir work_dirs/zoo_copy': (
        'python tools/zoo_benchmark.py --train-iters 2 --trackers ByteTrack --workers 1 --work-dir work_dirs/zoo_copy',
        "make demo's tiny run in the copy of its work dir (that a copy trains nothing and gives the same tables: "
        'tests/experiments/test_zoo_benchmark.py)'),
    'make demo': ('python tools/zoo_benchmark.py --train-iters 2 --trackers ByteTrack --workers 1',
                  'the zoo benchmark with a 2-iteration detector, ByteTrack only (all eight trackers with 2-iteration '
                  'trainings: tests/experiments/test_zoo_benchmark.py)'),
    'python tools/train.py configs/yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py': (TWO_ITERATIONS, '2 iterations'),
    **{f'python tools/train.py configs/{name}/{name}_tiny_vastmat-demo.py': (
        TWO_ITERATIONS, f'2 iterations (its whole tiny schedule: tests/models/mot/test_{name}.py)')
       for name in TINY_MODEL_ITERS},
    'python -m pip install': ('{command} --target {tmp}/site', 'into a private site directory'),
    'python tools/data/make_demo_data.py --out data/demo': ('{command} --frames 12', '12 frames a video'),
    'python tools/benchmark/convergence.py': ('{command} --train-iters 2 --trackers ByteTrack DiffMOT',
                                              "the zoo's 2-iteration trainings, the detector and D2MP"),
    'python tools/benchmark/overfit.py': ('{command} --train-iters 2', 'a 2-iteration training'),
    'python tools/benchmark/learning_curves.py': (
        None, "tests/benchmarks/test_learning_curves.py runs it on TransTrack's curve, with the suite's demo data"),
    'python tools/benchmark/demo_spread.py': ('{command} --seeds 0 --kernels',
                                              "the first seed only: it reads the tiny make demo's zoo.json"),
    'python tools/analysis/association_split.py': (
        'python tools/analysis/association_split.py --work-dir work_dirs/zoo_benchmark '
        '--results ByteTrack=work_dirs/zoo_benchmark/protocol1/ByteTrack/original/results',
        "the tiny make demo's ByteTrack results (the learned trackers' split: "
        "tests/benchmarks/test_association_split.py)"),
    'python tools/train.py configs/yolox/yolox_tiny_1xb8-600it_own-video.py': (
        TWO_ITERATIONS + ' val_dataloader.dataset.stride=10',
        '2 iterations, validated on every 10th frame (the full run: the numbers of docs/own_data.md)'),
    'python tools/test.py configs/yolox/yolox_tiny_1xb8-600it_own-video.py': (
        ['python tools/test.py configs/yolox/yolox_tiny_1xb8-600it_own-video.py --data-root data/fly '
         '--checkpoint work_dirs/fly/yolox/iter_2.pth --work-dir work_dirs/fly/yolox '
         '--dump-dets work_dirs/fly/dets_2it --cfg-options test_dataloader.dataset.stride=10',
         'python tools/data/simulate_detections.py --data-root data/fly --split protocol1/test '
         '--out work_dirs/fly/dets'],
        "the 2-iteration detector's test on every 10th frame; the trackers read detections simulated from the "
        'imported labels (a 2-iteration YOLOX finds no fly)'),
    'python tools/test.py configs/bytetrack/bytetrack_cached-dets.py --data-root work_dirs/at10': (
        '{command} --cfg-options "test_dataloader.dataset.videos=[chicken_3,deer_4]"',
        "two of AnimalTrack's 32 videos (all of them, against the official ByteTrack's output: "
        'tests/models/trackers/test_bytetrack_golden.py)'),
    'python tools/benchmark/config_check.py': ('{command} --iterations 1 --warmup 0',
                                               'one timed iteration, no warm-up (the timings: docs/training.md)'),
    'python tools/benchmark/training_frames.py': (
        '{command} --frames 50 --seeds 0 --iters 2 --workers 1 --test-frames 601-650',
        'one count, one seed, a 2-iteration training, 50 test frames (the full table: docs/own_data.md)'),
    # the launcher scripts: each script runs, and the Python it starts is a stand-in that records the launch
    # (_record_launch); a one-machine torchrun launch then runs as its ranks, processes forked from this one in the
    # environment torchrun gives its workers (RECORDED_LAUNCH_RUNS: no interpreter start each, about 6 CPU-seconds;
    # the launch read by torchrun's own parser), the two machines' halves are checked (CHECKS), the Slurm task runs in
    # this process from what was recorded
    'NNODES=2 NODE_RANK=0 MASTER_ADDR=127.0.0.1 PORT=29511 tools/dist_train.sh': (
        'PYTHON={tmp}/bin/record_launch {command}',
        "both machines' halves run the script; their torchrun arguments are recorded and checked (a real two-node "
        "torchrun would test torch's rendezvous, not ours)"),
    'GPUS=2 GPUS_PER_NODE=2 tools/slurm_train.sh': (
        'PYTHON={tmp}/bin/record_launch {command}',
        "the script and srun's stand-in run; the task they launch (tools/train.py --launcher=slurm in the task's "
        'Slurm environment) runs in this process'),
    'tools/dist_test.sh configs/bytetrack/bytetrack_cached-dets.py 2': (
        'PYTHON={tmp}/bin/record_launch {command}',
        'the script runs; the 2 ranks of the torchrun it launches run as forked processes, their videos split between '
        'them (gloo)'),
    'tools/dist_train.sh configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py 2': (
        'PYTHON={tmp}/bin/record_launch {command} --cfg-options '
        '"custom_imports=dict(imports=[\'helpers.rank_weights_hook\'], allow_failed_imports=False)" '
        '"custom_hooks=[dict(type=\'SaveRankWeightsHook\')]"',
        'the script runs; the 2 ranks of the torchrun it launches train as forked processes (DDP on gloo), and every '
        'rank also saves its weights (tests/helpers/rank_weights_hook.py), compared after the chain'),
}
# applied to every command after TINY: the checkpoints of the 2-iteration runs
SUBSTITUTIONS = ((f'iter_{DEMO_ITERS}.pth', 'iter_2.pth'), ('fly/yolox/iter_600.pth', 'fly/yolox/iter_2.pth'),
                 *((f'{name}_demo/iter_{iters}.pth', f'{name}_demo/iter_2.pth')
                   for name, iters in TINY_MODEL_ITERS.items()))
# the commands on all 32 videos of AnimalTrack-10fps-sim run on two of them (the golden tests cover all)
SUBSET = {
    'tools/analysis/matcher_table.py': ['--videos', 'chicken_3', 'deer_4'],
    'tools/analysis/sweep.py': ['--videos', 'chicken_3', 'deer_4'],
    'tools/analysis/motion_matcher_study.py': ['--videos', 'chicken_3', 'deer_4', '--bootstrap', '50'],
    'tools/benchmark/association_speed.py': ['--videos', '2', '--repeats', '1'],
    'tools/benchmark/byte_tracker_reference.py': ['--videos', '2', '--repeats', '1'],
    'tools/benchmark/testing_path.py': ['--repeats', '1'],  # (all 32 videos: about 10 s)
    'tools/analysis/oracle_association.py': ['--videos', 'chicken_3', 'deer_4'],
    # ByteTrack on two videos of the report half at both frame rates, a 500-frame video of 5 animals for the speed
    'tools/benchmark/global_linking.py': ['--trackers', 'ByteTrack', '--videos', 'deer_4', '--frames', '300',
                                          '--animals', '3', '--repeats', '1'],
    # 4 videos, 2 folds, 3 trials in this process (the study's resuming and workers: tests/experiments/test_tune.py)
    'tools/tune.py': ['--videos', 'chicken_3', 'deer_4', 'goose_4', 'zebra_3', '--folds', '2', '--trials', '3',
                      '--workers', '1', '--bootstrap', '50'],
}


# the pages' commands in independent chains (each in its own scratch workspace, run in parallel): each chain is
# (page, its `##` sections or None for all of it) in the order they run. The main chain depends on `make demo`'s
# outputs (the zoo's work dir and detections) and on the README's quick start (the demo detector's checkpoint and
# boxes), so every page that reads them follows both in it; the others stand alone (the studies read
# ../shared/data only)
CHAINS = {
    'demo': (('README.md', ('The two commands', )), ('docs/zoo.md', None), ('README.md', ('Quick start', )),
             ('docs/trackers.md', None), ('docs/sweeps.md', None), ('docs/evaluation.md', None),
             ('docs/report.md', None), ('docs/matchers.md', ('Matchers and CDA', ))),
    'data-and-training': (('docs/data.md', None), ('docs/training.md', None)),
    'studies': (('docs/matchers.md', ('How the trackers use a matcher; the matcher table', )),
                ('docs/studies.md', None), ('docs/tuning.md', None)),
    'linking': (('docs/linking.md', None), ),
    'plugin': (('docs/plugins.md', None), ),
    'own-data': (('docs/own_data.md', None), ),
}


# pages whose commands a test of their own runs (they need servers this test does not start)
OWN_TESTS = {'docs/scaling.md': 'tests/tools/test_scaling.py (a two-node Ray cluster and a PostgreSQL server)'}


def doc_pages() -> list[str]:
    """README.md and the pages of docs/, relative to the repository root."""
    return ['README.md'] + sorted(f'docs/{name}' for name in os.listdir(DOCS) if name.endswith('.md'))


def read_page(page: str) -> str:
    with open(osp.join(REPO, page), encoding='utf-8') as f:
        return f.read()


def page_sections(text: str) -> dict[str, str]:
    """A page's ``##`` sections by title; the text before the first one is the section ''."""
    first, *rest = re.split(r'^## ', text, flags=re.M)
    sections = {'': first}
    for section in rest:
        title = section.splitlines()[0].strip()
        assert title not in sections, f'two sections named {title!r}'
        sections[title] = section
    return sections


def readme_commands(text: str, sections: tuple[str, ...] | None = None) -> list[str]:
    """The commands of a page's ```bash blocks (of the ``##`` sections ``sections``, default all): continuation lines
    joined, comments dropped; a heredoc (``cat > FILE <<'EOF'`` to the line ``EOF``) is one command, its lines kept
    as written and run as ``bash -c '...'`` (docs/plugins.md writes its plugin's files so)."""
    commands = []
    for title, section in page_sections(text).items():
        if sections is not None and title not in sections:
            continue
        for block in re.findall(r'```bash\n(.*?)```', section, flags=re.S):
            commands += _block_commands(block)
    return commands


HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def _block_commands(block: str) -> list[str]:
    """The commands of one ```bash block (:func:`readme_commands`)."""
    commands, plain = [], []
    lines = iter(block.splitlines(keepends=True))
    for line in lines:
        match = None if line.lstrip().startswith('#') else HEREDOC.search(line)
        if match is None:
            plain.append(line)
            continue
        heredoc = [line]
        for body in lines:  # to the line holding only the delimiter
            heredoc.append(body)
            if body.rstrip('\n') == match.group(2):
                break
        commands += _plain_commands(''.join(plain)) + [shlex.join(['bash', '-c', ''.join(heredoc).rstrip('\n')])]
        plain = []
    return commands + _plain_commands(''.join(plain))


def _plain_commands(text: str) -> list[str]:
    """The commands of lines without a heredoc: continuation lines joined, comments dropped."""
    commands = []
    for line in re.sub(r'\\\n\s*', ' ', text).splitlines():
        line = line.split(' # ')[0].strip() if not line.lstrip().startswith('#') else ''
        if line:
            commands.append(line)
    return commands


def chain_commands(chain: str) -> list[str]:
    """The commands of a chain of :data:`CHAINS`, in the order it runs them."""
    return [command for page, sections in CHAINS[chain] for command in readme_commands(read_page(page), sections)]


def test_readme_has_runnable_commands_only_in_bash_blocks():
    commands = [c for page in doc_pages() for c in readme_commands(read_page(page))]
    assert len(commands) >= 15
    assert not any(re.search(r'\b(DETS|CKPT|ROOT|CONFIG)\b', c) for c in commands), \
        'placeholders belong in ```text blocks'
    for prefix in TINY:
        assert any(c.startswith(prefix) for c in commands), f'TINY names a command the pages lack: {prefix}'
    for chain, parts in CHAINS.items():
        for page, sections in parts:
            assert page in doc_pages(), f'chain {chain}: no page {page}'
            for title in sections or ():
                assert readme_commands(read_page(page), (title, )), f'chain {chain}: {page}: no commands in {title!r}'
    for page in doc_pages():
        if page in OWN_TESTS:
            assert readme_commands(read_page(page)) and not any(page == name for parts in CHAINS.values()
                                                                for name, _ in parts), page
            continue
        chained = [c for parts in CHAINS.values() for name, sections in parts if name == page
                   for c in readme_commands(read_page(page), sections)]
        assert sorted(chained) == sorted(readme_commands(read_page(page))), \
            f'{page}: a section with commands is in no chain of CHAINS, or in two'


def _without_fences(text: str) -> str:
    """A page without its fenced blocks (where '#' starts a comment, not a heading)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith('```'):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return '\n'.join(kept)


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens, ``-1``, ``-2``
    ... after a repeated one."""
    anchors, seen = set(), {}
    for heading in re.findall(r'^#{1,6} (.+)$', _without_fences(text), flags=re.M):
        slug = re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')
        anchors.add(f'{slug}-{seen[slug]}' if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def page_links(text: str) -> list[str]:
    """The targets of a page's Markdown links, outside code (fenced blocks and inline code)."""
    prose = re.sub(r'(`+)(.+?)\1', '', _without_fences(text))
    return re.findall(r'\[[^\]]*\]\(([^)\s]+)\)', prose)


def test_docs_pages_linked_and_links_resolve():
    readme_targets = {osp.normpath(target.partition('#')[0]) for target in page_links(read_page('README.md'))}
    for page in doc_pages()[1:]:
        assert page in readme_targets, f'{page} is not linked from README.md'
    for page in doc_pages():
        for target in page_links(read_page(page)):
            if re.match(r'^[a-z]+:', target):
                continue  # http(s), mailto
            path, _, anchor = target.partition('#')
            resolved = osp.normpath(osp.join(osp.dirname(page), path)) if path else page
            assert not resolved.startswith('..'), f'{page}: link {target} leaves the repository'
            assert osp.exists(osp.join(REPO, resolved)), f'{page}: link {target}: no {resolved}'
            if anchor:
                assert resolved.endswith('.md') and anchor in heading_anchors(read_page(resolved)), \
                    f'{page}: link {target}: no heading #{anchor} in {resolved}'


def _fake_srun(bin_dir: str) -> None:
    """An ``srun`` that drops its options and runs the task as Slurm task 0 of 1 on this machine."""
    script = osp.join(bin_dir, 'srun')
    with open(script, 'w') as f:
        f.write('#!/usr/bin/env bash\nwhile [[ "$1" == -* ]]; do [[ "$1" == -p ]] && shift; shift; done\n'
                'export SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_LOCALID=0 SLURM_NODELIST=localhost '
                'MASTER_ADDR=127.0.0.1\nexec "$@"\n')
    os.chmod(script, 0o755)


def _record_launch(bin_dir: str) -> None:
    """``record_launch``: a stand-in for the Python a launcher script starts; it appends its arguments and the
    launcher's environment (SLURM_*, MASTER_*) to ``work_dirs/launches.jsonl`` as one JSON line and exits."""
    script = osp.join(bin_dir, 'record_launch')
    with open(script, 'w') as f:
        f.write(f'#!{sys.executable}\n'
                'import json, os, sys\n'
                "env = {k: v for k, v in os.environ.items() if k.startswith(('SLURM_', 'MASTER_'))}\n"
                "os.makedirs('work_dirs', exist_ok=True)\n"
                "with open(os.path.join('work_dirs', 'launches.jsonl'), 'a') as f:\n"
                "    f.write(json.dumps(dict(argv=sys.argv[1:], env=env)) + '\\n')\n")
    os.chmod(script, 0o755)


def recorded_launches(root: str) -> list[dict]:
    """What :func:`_record_launch`'s stand-in recorded in the workspace ``root``, in order."""
    path = osp.join(root, 'work_dirs', 'launches.jsonl')
    return [json.loads(line) for line in open(path)] if osp.isfile(path) else []


def _run_recorded_task(root: str) -> None:
    """The last recorded launch (a Slurm task: ``-u tools/X.py ARGS``) in this process, in the environment srun's
    stand-in gave it; the variables the run sets (RANK, WORLD_SIZE, ...) are undone after it."""
    launch = recorded_launches(root)[-1]
    flag, script, *args = launch['argv']
    assert flag == '-u' and script.startswith('tools/'), launch
    saved = dict(os.environ)
    os.environ.update(launch['env'])
    try:
        tool(script, *args)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def torchrun_args(argv: list[str]):
    """A recorded torchrun launch (``-m torch.distributed.run OPTIONS SCRIPT ARGS``) read by torchrun's own parser (a
    launcher script's option torchrun does not take fails here, as it would there)."""
    from torch.distributed.run import get_args_parser
    assert argv[:2] == ['-m', 'torch.distributed.run'], argv
    return get_args_parser().parse_args(argv[2:])


def _run_recorded_ranks(root: str) -> None:
    """The last recorded torchrun launch (one node) as its ranks: processes forked from this one (no interpreter
    start each: :func:`helpers.common.forked_ranks`), with the environment torchrun gives its workers; each must end
    with exit code 0."""
    launch = torchrun_args(recorded_launches(root)[-1]['argv'])
    assert launch.nnodes == '1' and not launch.module and not launch.no_python, launch
    forked_ranks(launch.training_script, *launch.training_script_args, master_port=launch.master_port,
                 master_addr=launch.master_addr,
                 logs=[osp.join(root, 'work_dirs', f'rank{rank}.log') for rank in range(int(launch.nproc_per_node))])


# after a launcher script run with the record_launch stand-in: what runs its recorded launch
# (one machine's; a two-machine launch is only recorded and checked)
RECORDED_LAUNCH_RUNS = {'tools/slurm_train.sh': _run_recorded_task, 'tools/dist_train.sh': _run_recorded_ranks,
                        'tools/dist_test.sh': _run_recorded_ranks}


def _run(words: list[str], env: dict, cwd: str, text: str) -> None:
    """A command as a subprocess; a two-machine ``dist_train.sh`` (NNODES=2) runs both machines' halves here."""
    if words[0] == 'python':
        words = [sys.executable, *words[1:]]
    ranks = [env]
    if words[0].startswith(('tools/dist_', 'tools/slurm_')):
        env['PORT'] = env['MASTER_PORT'] = str(free_port())
        if env.get('NNODES') == '2':
            ranks = [dict(env, NODE_RANK='0'), dict(env, NODE_RANK='1')]
    procs = [subprocess.Popen(words, cwd=cwd, env=rank_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for rank_env in ranks]
    for proc in procs:
        output, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, f'{text}\n{output[-4000:]}'


def _workspace(tmp) -> str:
    """A scratch directory that looks like the repository root (configs, tools, vastmat linked; plugins copied, as pip
    builds in them; data and work_dirs its own; ../shared beside it), so the pages' relative paths resolve and
    outputs stay out of the checkout."""
    import shutil
    root = str(tmp / 'repo')
    os.makedirs(root)
    for name in ('configs', 'tools', 'vastmat'):
        os.symlink(osp.join(REPO, name), osp.join(root, name))
    shutil.copytree(osp.join(REPO, 'plugins'), osp.join(root, 'plugins'),
                    ignore=shutil.ignore_patterns('build', '*.egg-info', '__pycache__'))
    os.symlink(osp.dirname(SHARED_DATA), str(tmp / 'shared'))
    return root


def _expand(command: str, tmp) -> list[str]:
    """The commands the test runs for a command of the pages (none for one it does not run)."""
    commands = [command]
    for prefix, (replacement, _) in TINY.items():
        if command.startswith(prefix):
            if replacement is None:
                return []
            commands = replacement if isinstance(replacement, list) else [replacement.format(command=command,
                                                                                              tmp=tmp)]
            break
    for old, new in SUBSTITUTIONS:
        commands = [c.replace(old, new) for c in commands]
    return commands


def console_scripts() -> dict[str, str]:
    """setup.cfg's console scripts: name -> 'module:function'."""
    import configparser
    parser = configparser.ConfigParser()
    parser.read(osp.join(REPO, 'setup.cfg'))
    lines = parser['options.entry_points']['console_scripts'].strip().splitlines()
    return dict(tuple(part.strip() for part in line.split('=')) for line in lines)


def _console_script(entry_point: str, args: list[str]) -> int:
    """A console script of setup.cfg (``entry_point``: its 'module:function') run in this process on ``args``."""
    import importlib
    module, _, function = entry_point.partition(':')
    return getattr(importlib.import_module(module), function)(args)


def _run_chain(chain: str, tmp_path, root: str, env: dict, site: str, plugin_path) -> tuple[list, list]:
    """Run a chain's commands (:func:`test_readme_commands_run`); returns them and their (seconds, command)."""
    installed = False  # a pip install into ``site`` ran since the plugins were last loaded
    scripts = console_scripts()
    ran, timings = [], []
    for expanded in (c for command in chain_commands(chain) for c in _expand(command, tmp_path)):
        words = shlex.split(expanded)
        assignments = {}
        while words and re.match(r'^[A-Z_]+=', words[0]):
            key, value = words.pop(0).split('=', 1)
            assignments[key] = value
        start = time.perf_counter()
        in_process = not assignments and (words[0] in scripts
                                          or (words[0] == 'python' and words[1].startswith('tools/')))
        if in_process and installed:  # the plugins the chain pip-installed, loaded here as a new process would
            assert plugins_from(site, plugin_path).loaded
            installed = False
        if in_process and words[0] == 'python':
            subset = SUBSET.get(words[1], []) if 'AnimalTrack-10fps-sim' in expanded else []
            tool(words[1], *words[2:], *subset)
        elif in_process:
            assert _console_script(scripts[words[0]], words[1:]) == 0, expanded
        else:
            _run(words, dict(env, **assignments), root, expanded)
            installed = installed or words[:4] == ['python', '-m', 'pip', 'install']
            if 'PYTHON' in assignments and words[0] in RECORDED_LAUNCH_RUNS and assignments.get('NNODES', '1') == '1':
                RECORDED_LAUNCH_RUNS[words[0]](root)
        ran.append(expanded)
        timings.append((time.perf_counter() - start, expanded[:100]))
    return ran, timings


@pytest.mark.skipif(not osp.isdir(SHARED_DATA), reason=f'{SHARED_DATA}: not found (../shared/data beside the clone)')
@pytest.mark.parametrize('chain', [pytest.param(name, marks=pytest.mark.xdist_group(f'readme-{name}'))
                                   for name in CHAINS])
def test_readme_commands_run(chain, tmp_path, monkeypatch):
    root = _workspace(tmp_path)
    bin_dir = str(tmp_path / 'bin')
    os.makedirs(bin_dir)
    _fake_srun(bin_dir)
    _record_launch(bin_dir)
    monkeypatch.chdir(root)
    env = dict(os.environ, PATH=os.pathsep.join([bin_dir, osp.dirname(sys.executable), os.environ['PATH']]),
               PYTHONPATH=os.pathsep.join([str(tmp_path / 'site'), REPO]), PYTHON=sys.executable)
    if chain == 'demo':  # make demo's data, smaller: 12 frames a video, the 3 test videos of the split it draws
        from vastmat.datasets.demo_data import make_demo_dataset
        make_demo_dataset(osp.join(root, 'data', 'demo'), num_frames=12, extra_test_videos=())
    site = str(tmp_path / 'site')  # where the chain's pip installs go (TINY)
    with plugin_registrations_undone(), monkeypatch.context() as plugin_path:
        ran, timings = _run_chain(chain, tmp_path, root, env, site, plugin_path)
    print('\n'.join(f'{seconds:6.1f} s  {command}' for seconds, command in sorted(timings, reverse=True)))
    assert ran
    CHECKS[chain](root)


def _check_demo(root: str) -> None:
    """The zoo's tables and plots, a video, the sweep's table; tools/dist_test.sh (2 processes, the videos split
    between them) wrote the results and metrics of the one-process tools/test.py run."""
    for path in ('work_dirs/zoo_benchmark/zoo.json', 'work_dirs/zoo_benchmark/hota_by_tracker.png',
                 'work_dirs/zoo_benchmark/report.html', 'work_dirs/report_demo.html',
                 'work_dirs/demo_video/Bee-1.mp4', 'work_dirs/sweep_demo/table.csv'):
        assert osp.getsize(osp.join(root, path)) > 0, path
    single, dist = (osp.join(root, 'work_dirs', name) for name in ('bytetrack_demo', 'bytetrack_demo_dist'))
    videos = sorted(os.listdir(osp.join(single, 'results')))
    assert videos and videos == sorted(os.listdir(osp.join(dist, 'results')))
    for video in videos:
        assert (open(osp.join(single, 'results', video)).read()
                == open(osp.join(dist, 'results', video)).read()), video
    assert json.load(open(osp.join(single, 'metrics.json'))) == json.load(open(osp.join(dist, 'metrics.json')))


def _check_data_and_training(root: str) -> None:
    """tools/dist_train.sh: the 2 processes end with identical weights, which rank 0's checkpoint holds, and
    validated on the test videos between them; the Slurm task wrote its checkpoint; the two machines' halves launched
    torchrun as one two-node job (the demo chain runs tools/dist_test.sh)."""
    work_dir = osp.join(root, 'work_dirs', 'yolox_dist')
    rank0, rank1 = (torch.load(osp.join(work_dir, f'rank{rank}_of2.pth'), weights_only=True) for rank in (0, 1))
    assert rank0.keys() == rank1.keys() and len(rank0) > 50
    assert all(torch.equal(rank0[k], rank1[k]) for k in rank0)
    checkpoint = torch.load(osp.join(work_dir, 'iter_2.pth'), weights_only=True)['state_dict']
    assert all(torch.equal(checkpoint[k], rank0[k]) for k in rank0)
    scalars = glob.glob(osp.join(work_dir, '*', 'vis_data', 'scalars.json'))
    assert len(scalars) == 1 and 'coco/bbox_mAP' in json.loads(open(scalars[0]).read().splitlines()[-1]), scalars
    assert osp.getsize(osp.join(root, 'work_dirs/yolox_slurm/iter_2.pth')) > 0
    # the two machines' halves: one torchrun process each, node ranks 0 and 1, the same master and training
    launches = recorded_launches(root)
    two_nodes = sorted((launch['argv'] for launch in launches if '--nnodes=2' in launch['argv']),
                       key=lambda argv: argv[3])  # (the halves run side by side: recorded in either order)
    assert len(two_nodes) == 2, launches
    for node_rank, argv in enumerate(two_nodes):
        port = next(a for a in argv if a.startswith('--master_port=')).partition('=')[2]
        assert port.isdigit() and argv == [
            '-m', 'torch.distributed.run', '--nnodes=2', f'--node_rank={node_rank}', '--master_addr=127.0.0.1',
            '--nproc_per_node=1', f'--master_port={port}', 'tools/train.py',
            'configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py', '--launcher', 'pytorch', '--work-dir',
            'work_dirs/yolox_2nodes'], argv
        assert torchrun_args(argv).node_rank == node_rank  # as torchrun reads them
    slurm = [launch for launch in launches if '--launcher=slurm' in launch['argv']]
    assert len(slurm) == 1 and slurm[0]['env']['SLURM_NTASKS'] == '1', slurm


def _check_studies(root: str) -> None:
    """The matcher tables, the motion-matcher study and the tuner wrote their tables (and the tuner its preset)."""
    for path in ('work_dirs/matchers_at10/table.json', 'work_dirs/matchers_at10_tracktrack/table.json',
                 'work_dirs/motion_study/table.json', 'work_dirs/tune_bytetrack/tune.json',
                 'work_dirs/tune_bytetrack/bytetrack_cached-dets_tuned-AnimalTrack-10fps-sim.py'):
        assert osp.getsize(osp.join(root, path)) > 0, path


def _check_linking(root: str) -> None:
    """The linking page's oracle, counts, linked results, linked preset and benchmark."""
    for path in ('work_dirs/oracle/metrics.json', 'work_dirs/bytetrack_relinked/metrics.json',
                 'work_dirs/tune_linking/bytetrack_cached-dets_tuned-linked-animaltrack-10fps-sim.py',
                 'work_dirs/global_linking/global_linking.json', 'work_dirs/global_linking/linking_speed.png'):
        assert osp.getsize(osp.join(root, path)) > 0, path
    # docs/linking.md's counts: deer_4 held to 24 identities, chicken_4 to at most 30
    reports = {r['video']: r for r in json.load(open(osp.join(root, 'work_dirs/bytetrack_linked/linking.json')))}
    assert (reports['deer_4']['num_animals'], reports['chicken_4']['max_animals']) == (24, 30)
    assert reports['deer_4']['identities'] <= 24 and reports['chicken_4']['identities'] <= 30


def _check_plugin(root: str) -> None:
    """docs/plugins.md's NearestCentre, pip-installed from the files the page wrote outside the checkout: a row of
    the zoo's Table 5 with a real HOTA, and tools/test.py with the plugin's own config (the constructor defaults)
    wrote the zoo's tracks and metrics again."""
    zoo_dir = osp.join(root, 'work_dirs', 'zoo_benchmark')
    table5 = json.load(open(osp.join(zoo_dir, 'zoo.json')))['table5']
    assert {'NearestCentre', 'ByteTrack'} <= set(table5), sorted(table5)
    hota = table5['NearestCentre']['protocol1/HOTA']
    assert isinstance(hota, float) and 0 < hota <= 1, hota
    with open(osp.join(zoo_dir, 'table5.csv')) as f:
        assert any(line.startswith('NearestCentre,') for line in f)
    zoo_results = osp.join(zoo_dir, 'protocol1', 'NearestCentre', 'original', 'results')
    own = osp.join(root, 'work_dirs', 'nearest_demo')
    videos = sorted(os.listdir(zoo_results))
    assert videos and videos == sorted(os.listdir(osp.join(own, 'results')))
    for video in videos:
        assert (open(osp.join(zoo_results, video)).read()
                == open(osp.join(own, 'results', video)).read()), video
    assert json.load(open(osp.join(own, 'metrics.json')))['vastmat/HOTA'] == pytest.approx(hota)


def _check_own_data(root: str) -> None:
    """The fly walkthrough: the imported root, the linked tracks (at most 2 identities), the drawn video, the
    movement dataset (loaded back with the linked tracks' boxes), the table, the swap replayed onto the unlinked run
    and undone on the linked one; the training-frames benchmark's table."""
    from vastmat.apis import read_track_rows
    from vastmat.apis.export import load_movement, movement_to_results
    from vastmat.apis.identity_edits import read_edit_log
    work = osp.join(root, 'work_dirs', 'fly')
    assert json.load(open(osp.join(root, 'data', 'fly', 'import.json')))['sequences']['fly-test']['frames'] == 500
    linked = read_track_rows(osp.join(work, 'linked', 'results', 'fly-test.txt'))
    assert 0 < len(set(linked[:, 1].tolist())) <= 2
    assert osp.getsize(osp.join(work, 'linked.mp4')) > 0 and osp.getsize(osp.join(work, 'trajectories.csv')) > 0
    exported = movement_to_results(load_movement(osp.join(work, 'fly-test.nc')))
    assert len(exported.frames) == len(linked)
    assert not osp.isfile(osp.join(work, 'linked', 'results', 'unedited', 'fly-test.txt'))  # undone
    replayed = read_edit_log(osp.join(work, 'bytetrack', 'results', 'identity_edits.jsonl'))
    assert [edit.op for edit in replayed] == ['swap']
    frames = json.load(open(osp.join(root, 'work_dirs', 'training_frames', 'training_frames.json')))
    assert [row['train_frames'] for row in frames['rows']] == [50]
    assert frames['truth'] == {'boxes': 100, 'identities': 2}  # SLEAP's two flies in frames 601-650, in each one


CHECKS = {'demo': _check_demo, 'data-and-training': _check_data_and_training, 'studies': _check_studies,
          'linking': _check_linking, 'plugin': _check_plugin, 'own-data': _check_own_data}
