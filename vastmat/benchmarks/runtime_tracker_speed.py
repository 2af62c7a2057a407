"""The end-to-end runtime trackers' speed: MOTIP's and TCEI's trackers on recorded DETR outputs (the ID decoder's
work per frame and the trackers' bookkeeping, no detector), beside their official code in the same run where
``peer_python`` and checkouts of the official repositories are given (:mod:`.peer_runtime_trackers` times them
there; nothing of the official code is in this project).

Inputs: per video of a simulated-detection root (AnimalTrack-10fps-sim), :func:`~.simulated_inputs.detr_queries`
(the detections as DETR queries with identity-consistent 256-d features, 8 padding queries per frame); weights: the
published decoder size (6 layers, K = 50, rel_pe_length 30) with :func:`~.simulated_inputs.deterministic_motip_weights`
``'tracking'`` (a decoder that tracks by feature similarity, so tracks live as long as a trained one's); the
published inference settings (det 0.3, newborn 0.6, id 0.2, miss_tolerance 30, object-max) and TCEI's
``dancetrack`` preset (every cache on). Each tracker runs every video ``repeats`` times, the best time per video
counts; TCEI's cross-video caches start empty in every repeat and carry over from video to video within one (as
the official ``submit_and_evaluate.py``). The ids reported per frame are compared with the official code's.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from rich.table import Table
from tqdm import tqdm

from vastmat.datasets.sequences import list_sequences
from vastmat.structures.tracking import TrackingFrame
from vastmat.utils.errors import UserInputError

from .association_speed import run_peer_script
from .simulated_inputs import deterministic_motip_weights, detr_queries

PEER_SCRIPT = Path(__file__).with_name('peer_runtime_trackers.py')
ID_DECODER = dict(feature_dim=256, id_dim=256, ffn_dim_ratio=2, num_layers=6, head_dim=32, num_id_vocabulary=50,
                  rel_pe_length=30)  # the published size
RUNTIME = dict(det_thresh=0.3, newborn_thresh=0.6, id_thresh=0.2, area_thresh=0.0, miss_tolerance=30,
               assignment_protocol='object-max')  # the published inference settings
TCEI_PRESET = 'dancetrack'
OFFICIAL = {'MOTIPTracker': 'official MOTIP', 'TCEITracker': 'official TCEI'}


def load_queries(data_root: str, videos: int | None = None, frames: int | None = None) -> list[dict]:
    """The first ``videos`` videos of ``data_root`` (name order) as DETR queries (:func:`detr_queries`), their first
    ``frames`` frames; each ``dict(name, image_hw, frames)``."""
    if not (Path(data_root, 'gt').is_dir() and Path(data_root, 'dets').is_dir()):
        raise UserInputError(f'--data-root {data_root}: not a simulated-detection root (gt/<video>/ and '
                             'dets/<video>.txt, as AnimalTrack-10fps-sim)')
    names = list_sequences(str(Path(data_root, 'gt')))
    names = names[:videos] if videos else names
    return [dict(name=name, **detr_queries(data_root, name, num_frames=frames))
            for name in tqdm(names, desc='building the DETR queries')]


def id_modules() -> tuple[torch.nn.Module, torch.nn.Module]:
    """MOTIP's trajectory modelling and ID decoder of the published size with the deterministic tracking weights."""
    from vastmat.models.trackers.motip_modules import MOTIPIDDecoder, MOTIPTrajectoryModeling
    trajectory_modeling, id_decoder = MOTIPTrajectoryModeling(), MOTIPIDDecoder(**ID_DECODER)
    deterministic_motip_weights(trajectory_modeling, 'tracking')
    deterministic_motip_weights(id_decoder, 'tracking')
    return trajectory_modeling.eval(), id_decoder.eval()


def tcei_settings() -> dict:
    """TCEI's settings of the benchmark: the preset's values under the official argument names."""
    from vastmat.models.trackers.tcei_params import resolve_tcei_params
    values = asdict(resolve_tcei_params(TCEI_PRESET))
    values.pop('prob_map_length_quirk')  # the port's switch (default: the published reading)
    return values


def our_trackers(modules: tuple[torch.nn.Module, torch.nn.Module]) -> dict[str, Any]:
    """MOTIPTracker and TCEITracker sharing ``modules`` (eval mode)."""
    from vastmat.models.trackers.motip_tracker import MOTIPTracker
    from vastmat.models.trackers.tcei_tracker import TCEITracker
    trajectory_modeling, id_decoder = modules
    motip = MOTIPTracker(trajectory_modeling=trajectory_modeling, id_decoder=id_decoder, **RUNTIME)
    tcei = TCEITracker(trajectory_modeling=trajectory_modeling, id_decoder=id_decoder, preset=TCEI_PRESET, **RUNTIME)
    return {'MOTIPTracker': motip.eval(), 'TCEITracker': tcei.eval()}


def tracking_frames(video: dict) -> list[TrackingFrame]:
    """The port's input of each frame: the pixel boxes, the float32 scores and the features of every query."""
    return [TrackingFrame.from_arrays(f['xyxy'], f['scores'], t + 1, features=f['features'].astype(np.float64),
                                      video_name=video['name']) for t, f in enumerate(video['frames'])]


def time_ours(trackers: dict[str, Any], videos: list[dict], repeats: int) -> tuple[dict, dict]:
    """``(best seconds per tracker per video, ids per tracker per video per frame)``."""
    prepared = [tracking_frames(v) for v in videos]
    best = {name: [float('inf')] * len(videos) for name in trackers}
    ids: dict[str, list] = {name: [] for name in trackers}
    for repeat in tqdm(range(repeats), desc='repeats'):
        for tracker in trackers.values():
            if hasattr(tracker, 'reset_experience'):
                tracker.reset_experience()  # TCEI's cross-video caches: new per run over the videos
        for v, frames in enumerate(prepared):
            for name, tracker in trackers.items():
                start = time.perf_counter()
                tracker.reset()
                outputs = [tracker.update(frame) for frame in frames]
                best[name][v] = min(best[name][v], time.perf_counter() - start)
                if repeat == 0:
                    ids[name].append([out.ids.tolist() for out in outputs])
    return best, ids


def write_runtime_inputs(videos: list[dict], modules: tuple[torch.nn.Module, torch.nn.Module], inputs: Path,
                         weights: Path) -> None:
    """What :mod:`.peer_runtime_trackers` reads: the queries (``.npz``) and the ID modules' state dicts with the
    decoder's size and the tracker settings (``.pt``)."""
    arrays = dict(names=np.array([v['name'] for v in videos]))
    for v, video in enumerate(videos):
        arrays[f'image_hw_{v}'] = np.array(video['image_hw'], np.int64)
        arrays[f'counts_{v}'] = np.array([len(f['logits']) for f in video['frames']], np.int64)
        for key in ('logits', 'boxes', 'features'):
            arrays[f'{key}_{v}'] = np.concatenate([f[key] for f in video['frames']])
    np.savez(inputs, **arrays)
    trajectory_modeling, id_decoder = modules
    torch.save(dict(trajectory_modeling=trajectory_modeling.state_dict(), id_decoder=id_decoder.state_dict(),
                    id_decoder_args=ID_DECODER, runtime=RUNTIME, tcei=tcei_settings()), weights)


def official_times(peer_python: str, videos: list[dict], modules: tuple, repeats: int, threads: int,
                   official_motip: str | None, official_tcei: str | None,
                   log: Callable[[str], Any] = print) -> tuple[dict, dict]:
    """``(best seconds, ids)`` of the official trackers, timed by :mod:`.peer_runtime_trackers` under
    ``peer_python``."""
    with tempfile.TemporaryDirectory() as tmp:
        inputs, weights, out = Path(tmp) / 'inputs.npz', Path(tmp) / 'weights.pt', Path(tmp) / 'out.json'
        write_runtime_inputs(videos, modules, inputs, weights)
        arguments = [str(PEER_SCRIPT), '--inputs', str(inputs), '--weights', str(weights), '--out', str(out),
                     '--repeats', str(repeats), '--threads', str(threads)]
        if official_motip:
            arguments += ['--official-motip', str(official_motip)]
        if official_tcei:
            arguments += ['--official-tcei', str(official_tcei)]
        log(f'timing the official trackers under {peer_python}')
        result = run_peer_script(peer_python, arguments, out)
    return result['seconds'], result['ids']


def runtime_tracker_speed(data_root: str, videos: int | None = None, frames: int | None = None, repeats: int = 3,
                          threads: int = 1, peer_python: str | None = None, official_motip: str | None = None,
                          official_tcei: str | None = None, log: Callable[[str], Any] = print) -> dict:
    """The whole benchmark (the module's docstring): counts, per tracker seconds, frames/s, rows reported, and for
    the ports the ratio to their official code and whether the ids are the same in every frame."""
    if (official_motip or official_tcei) and not peer_python:
        raise UserInputError('--official-motip / --official-tcei need --peer-python (the environment the official '
                             'code runs in: torch, torchvision, einops, scipy, yaml)')
    if repeats < 1:
        raise UserInputError(f'--repeats {repeats}: at least 1')
    torch.set_num_threads(threads)
    loaded = load_queries(data_root, videos, frames)
    modules = id_modules()
    with torch.no_grad():
        best, ids = time_ours(our_trackers(modules), loaded, repeats)
    if official_motip or official_tcei:
        theirs, their_ids = official_times(peer_python, loaded, modules, repeats, threads, official_motip,
                                           official_tcei, log)
        best.update(theirs)
        ids.update(their_ids)
    num_frames = sum(len(v['frames']) for v in loaded)
    results = dict(videos=len(loaded), frames=num_frames, threads=threads,
                   queries=sum(len(f['logits']) for v in loaded for f in v['frames']), trackers={})
    for name, times in best.items():
        seconds = float(sum(times))
        row = dict(seconds=seconds, fps=num_frames / seconds,
                   rows=sum(len(f) for video in ids[name] for f in video),
                   per_video={v['name']: t for v, t in zip(loaded, times)})
        official = OFFICIAL.get(name)
        if official in best:
            row['ratio_to_official'] = float(sum(best[official])) / seconds
            row['same_ids_as_official'] = ids[name] == ids[official]
        results['trackers'][name] = row
    return results


def speed_table(results: dict) -> Table:
    """The results as a table: seconds, frames/s, rows, and for the ports the ratio to the official code."""
    table = Table(title=f'Runtime trackers: {results["videos"]} videos, {results["frames"]} frames, '
                        f'{results["queries"]} queries, {results["threads"]} CPU thread(s)')
    for column in ('tracker', 'seconds', 'frames/s', 'rows', 'x its official code', 'same ids'):
        table.add_column(column, justify='left' if column == 'tracker' else 'right')
    for name, row in results['trackers'].items():
        ratio = row.get('ratio_to_official')
        same = row.get('same_ids_as_official')
        table.add_row(name, f'{row["seconds"]:.2f}', f'{row["fps"]:.1f}', str(row['rows']),
                      '' if ratio is None else f'{ratio:.2f}', '' if same is None else str(same))
    return table

