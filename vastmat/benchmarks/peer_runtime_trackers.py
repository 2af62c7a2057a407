"""Times the official MOTIP and TCEI runtime trackers (``models/runtime_tracker.py`` of checkouts of MCG-NJU/MOTIP and
1941Zpf/TCEI) on recorded DETR outputs, in the Python environment given to the benchmark (it needs torch, torchvision,
einops, scipy and yaml, as the official code imports them; never vastmat), on the CPU.

    PEER_PYTHON vastmat/benchmarks/peer_runtime_trackers.py --inputs INPUTS.npz --weights WEIGHTS.pt --out OUT.json
        [--repeats R] [--threads N] [--official-motip DIR] [--official-tcei DIR]

``vastmat.benchmarks.runtime_tracker_speed`` writes the inputs (the queries of each video, ``write_runtime_inputs``)
and the weights (the state dicts of the ID modules, the tracker settings), runs this script and reads the result
back: per tracker the best seconds of each video over ``--repeats`` and the ids it reported per frame (official id +
1, as the ports report them).

The official code is loaded as tests/fixtures/motip_tracker_official and tcei_official were made: its packages
``models``, ``models.motip``, ``utils``, ``structures`` (and ``TCEI``) without running their ``__init__.py`` (the
official ``models/motip/__init__.py`` builds Deformable DETR and its compiled CUDA operator); ``accelerate`` (which the
official ``utils/misc.py`` imports for its device) is a stub of one CPU process; ``Tensor.cuda`` returns the tensor
(the official TCEI code calls it). The model is the official ``MOTIP`` forward's dispatch: ``part='detr'`` returns
the frame's recorded outputs, ``'trajectory_modeling'`` / ``'id_decoder'`` call the official modules with the given
weights (``strict=True``). Per video a new ``RuntimeTracker`` (per video also TCEI's per-video caches; its
cross-video caches new per repeat, as once per run in ``submit_and_evaluate.py``); ``update`` and
``get_track_results`` are timed. TCEI runs with ONE line of ``TCEI/tcei.py`` replaced (``MINMAX_LINE`` ->
``MINMAX_PATCH``, as the ``patched`` golden run): unmodified, its per-video negative cache gives NaN logits the frame
after its first item (a one-class min-max, 0 / 0), and the run would not be the same tracking.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

if __package__:
    from .peer_trackers import _empty_modules, _package
else:  # run by its path in the peer environment (no vastmat there): the helpers of the script beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from peer_trackers import _empty_modules, _package

OFFICIAL_PACKAGES = ('models', 'utils', 'structures', 'TCEI')
MINMAX_LINE = "            affinity = (affinity - affinity.min()) / (affinity.max() - affinity.min())\n"
MINMAX_PATCH = ("            affinity = torch.ones_like(affinity) if bool(affinity.max() == affinity.min()) else "
                "(affinity - affinity.min()) / (affinity.max() - affinity.min())\n")


def read_inputs(path: str) -> list[dict]:
    """The videos of ``write_runtime_inputs``: name, ``(height, width)`` and per frame the recorded DETR outputs
    ``pred_logits (1, Q, 1)``, ``pred_boxes (1, Q, 4)`` (normalised cx cy w h), ``outputs (1, Q, C)``."""
    data = np.load(path)
    videos = []
    for v, name in enumerate(data['names']):
        bounds = np.concatenate([[0], np.cumsum(data[f'counts_{v}'])])
        logits, boxes, features = (torch.from_numpy(data[f'{key}_{v}']) for key in ('logits', 'boxes', 'features'))
        frames = [dict(pred_logits=logits[a:b][None], pred_boxes=boxes[a:b][None], outputs=features[a:b][None])
                  for a, b in zip(bounds[:-1], bounds[1:])]
        videos.append(dict(name=str(name), image_hw=tuple(int(x) for x in data[f'image_hw_{v}']), frames=frames))
    return videos


class _PartialState:
    """The ``accelerate.PartialState`` of one CPU process."""
    device = torch.device('cpu')
    process_index = 0
    num_processes = 1
    is_main_process = True

    def __init__(self, *args, **kwargs):
        self.distributed_type = _DistributedType.NO


class _DistributedType:
    NO = 'NO'


def _forget_official_packages() -> None:
    """Take the official top-level packages (and their modules) out of ``sys.modules``."""
    for name in [n for n in sys.modules if n.split('.')[0] in OFFICIAL_PACKAGES]:
        del sys.modules[name]


def _load_official(root: str, tcei: bool):
    """``(RuntimeTracker, TrajectoryModeling, IDDecoder, tcei module or None)`` of a checkout; its top-level
    packages are taken out of ``sys.modules`` again (MOTIP's and TCEI's have the same names)."""
    root_path = Path(root)
    if not (root_path / 'models' / 'runtime_tracker.py').is_file():
        raise SystemExit(f'{root}: no models/runtime_tracker.py (a checkout of '
                         f'{"1941Zpf/TCEI" if tcei else "MCG-NJU/MOTIP"})')
    _empty_modules(accelerate=dict(PartialState=_PartialState, DistributedType=_DistributedType))
    _forget_official_packages()
    for package in ('models', 'models/motip', 'utils', 'structures') + (('TCEI', ) if tcei else ()):
        _package(package.replace('/', '.'), root_path / package)
    try:
        from models.motip.id_decoder import IDDecoder
        from models.motip.trajectory_modeling import TrajectoryModeling
        from models.runtime_tracker import RuntimeTracker
        tcei_module = None
        if tcei:
            import models.runtime_tracker as runtime_module
            import TCEI.tcei as tcei_module
            source = inspect.getsource(tcei_module)
            if source.count(MINMAX_LINE) != 1:
                raise SystemExit(f'{tcei_module.__file__}: not the tcei.py this patch was written for (TCEI 145d1b8)')
            exec(compile(source.replace(MINMAX_LINE, MINMAX_PATCH), tcei_module.__file__, 'exec'),
                 tcei_module.__dict__)
            runtime_module.compute_cache_logits = tcei_module.compute_cache_logits
    finally:
        _forget_official_packages()
    return RuntimeTracker, TrajectoryModeling, IDDecoder, tcei_module


def _model(TrajectoryModeling, IDDecoder, saved: dict) -> torch.nn.Module:
    """The official MOTIP forward's dispatch over the recorded DETR outputs and the official ID modules."""
    decoder = saved['id_decoder_args']
    trajectory_modeling = TrajectoryModeling(detr_dim=decoder['feature_dim'], ffn_dim_ratio=decoder['ffn_dim_ratio'],
                                             feature_dim=decoder['feature_dim'])
    id_decoder = IDDecoder(use_aux_loss=False, use_shared_aux_head=True, **decoder)
    trajectory_modeling.load_state_dict(saved['trajectory_modeling'], strict=True)
    id_decoder.load_state_dict(saved['id_decoder'], strict=True)

    class RecordedMOTIP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.trajectory_modeling, self.id_decoder = trajectory_modeling, id_decoder
            self.num_id_vocabulary = decoder['num_id_vocabulary']
            self.current = None

        def forward(self, **kwargs):
            if kwargs['part'] == 'detr':
                return self.current
            if kwargs['part'] == 'trajectory_modeling':
                return self.trajectory_modeling(kwargs['seq_info'])
            return self.id_decoder(kwargs['seq_info'], use_decoder_checkpoint=False)
    return RecordedMOTIP().eval()


def official_runner(root: str, saved: dict, tcei: bool):
    """``run(video, experience) -> ids per frame`` of the official MOTIP or TCEI tracker (``experience``: TCEI's
    cross-video caches, a dict kept by the caller for a run over the videos)."""
    RuntimeTracker, TrajectoryModeling, IDDecoder, _ = _load_official(root, tcei)
    model = _model(TrajectoryModeling, IDDecoder, saved)
    settings = dict(saved['runtime'], **(saved['tcei'] if tcei else {}))

    def run(video: dict, experience: dict) -> list[list[int]]:
        tracker = RuntimeTracker(model=model, sequence_hw=video['image_hw'], **settings)
        caches = {}
        if tcei:
            caches = dict(pos_cache={}, neg_cache={}, w_pos_cache=experience.setdefault('w_pos', {}),
                          w_neg_cache=experience.setdefault('w_neg', {}))
        ids = []
        for outputs in video['frames']:
            model.current = outputs
            tracker.update(image=None, **caches)
            ids.append([int(i) + 1 for i in tracker.get_track_results()['id'].tolist()])
        return ids
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--inputs', required=True)
    parser.add_argument('--weights', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--official-motip', help='a checkout of MCG-NJU/MOTIP')
    parser.add_argument('--official-tcei', help='a checkout of 1941Zpf/TCEI')
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.Tensor.cuda = lambda self, *a, **k: self  # CPU only (the official TCEI code calls .cuda())
    videos = read_inputs(args.inputs)
    saved = torch.load(args.weights, weights_only=True)
    runners = {}
    if args.official_motip:
        runners['official MOTIP'] = official_runner(args.official_motip, saved, tcei=False)
    if args.official_tcei:
        runners['official TCEI'] = official_runner(args.official_tcei, saved, tcei=True)
    best = {name: [float('inf')] * len(videos) for name in runners}
    ids = {name: [] for name in runners}
    with torch.no_grad():
        for repeat in range(args.repeats):
            experience = {name: {} for name in runners}
            for v, video in enumerate(videos):
                for name, run in runners.items():
                    start = time.perf_counter()
                    out = run(video, experience[name])
                    best[name][v] = min(best[name][v], time.perf_counter() - start)
                    if repeat == 0:
                        ids[name].append(out)
    result = dict(python=sys.version.split()[0], torch=torch.__version__, seconds=best, ids=ids)
    temporary = f'{args.out}.tmp'
    with open(temporary, 'w') as f:
        json.dump(result, f)
    os.replace(temporary, args.out)


if __name__ == '__main__':
    main()
