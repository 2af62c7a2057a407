"""How the zoo tracks and scores: the detector's cached boxes, a tracker on them (with the inputs of a learned part
at one checkpoint), the checkpoints it scores and their curve points, and a whole model's run folders (its score
thresholds are calibrated by :mod:`.zoo_calibration`). The members' runs that train and call these are in :mod:`.zoo`.
"""
from __future__ import annotations

import json
import os
import os.path as osp

from mmengine.config import Config

from vastmat.models.trackers.zoo import ZooTracker, config_path
from vastmat.utils.io import write_json_atomic

from .zoo_context import ZooContext
from .zoo_testing import detector_test_config, run_detector_test
from .zoo_training import UNTRAINED_KEYS, Training, content_hash
from .zoo_training_order import training_config

TRACKING_BASE = config_path('_base_/tracking_cached-dets.py')
DONE = 'dump_done.json'  # written last in a feature dump's folder
DETECTIONS_DONE = 'detections_done.json'  # written last in a folder of the detector's boxes (:func:`detect_once`)
DETECTIONS_FORMAT = 1  # of the dumped boxes and their metrics: raised where a change of the dump or its metric
# changes them, so that earlier runs' boxes are dumped again
SCORED_CHECKPOINTS = 2  # of the NUM_CHECKPOINTS kept, the zoo scores the first and the last: HOTA against minutes


# ------------------------------------------------------------------------------------------------- cached detections
def detector_boxes(ctx: ZooContext, config: str, checkpoint: str, work_dir: str) -> tuple[dict, str, dict]:
    """Test the detector on the test videos and dump its boxes to ``ctx.work_dir/dets`` and, with NMS 0.95, to
    ``dets_nms95`` (TrackTrack's ``nms95`` set); returns its metrics, the det root and the extra roots."""
    det_root, extra = osp.join(ctx.work_dir, 'dets'), dict(nms95=osp.join(ctx.work_dir, 'dets_nms95'))
    metrics = detect_once(ctx, config, checkpoint, work_dir, det_root)
    detect_once(ctx, config, checkpoint, work_dir, extra['nms95'], nms_iou=0.95)
    return metrics, det_root, extra


def detect_once(ctx: ZooContext, config: str, checkpoint: str, work_dir: str, out_dir: str,
                nms_iou: float | None = None) -> dict:
    """:func:`~.zoo_testing.detect`'s test unless ``out_dir`` holds the boxes of the same test of every test video:
    the same test config (:func:`~.zoo_testing.detector_test_config`: its NMS too, less the display's paces),
    checkpoint content, data (its fingerprint: the split lists, seqinfo.ini and gt.txt files, not the frames), CPU
    kernels (:func:`content_hash`, so that a copied or moved work dir finds them) and :data:`DETECTIONS_FORMAT`.
    :data:`DETECTIONS_DONE`, written last, records that and the metrics."""
    done = osp.join(out_dir, DETECTIONS_DONE)
    cfg = detector_test_config(config, checkpoint, ctx.data_root, ctx.protocol, work_dir, out_dir, nms_iou)
    settings = cfg.to_dict()
    key = content_hash(dict(config={k: v for k, v in settings.items() if k != 'work_dir' and k not in UNTRAINED_KEYS},
                            format=DETECTIONS_FORMAT))
    if osp.isfile(done):
        saved = json.load(open(done, encoding='utf-8'))
        if saved.get('key') == key and all(_has_boxes(out_dir, video) for video in ctx.videos):
            return saved['metrics']
        os.remove(done)  # another test's boxes, or some are missing: dumped again below
    metrics = run_detector_test(cfg, out_dir)
    write_json_atomic(dict(key=key, metrics=metrics), done)
    return metrics


def _has_boxes(det_root: str, video: str) -> bool:
    from vastmat.datasets.detections import detection_file
    try:
        detection_file(det_root, video)
    except FileNotFoundError:
        return False
    return True


def track_on_cached(ctx: ZooContext, member: ZooTracker, matcher: str, det_root: str, extra_det_roots: dict | None,
                    run_dir: str, tracker_overrides: dict | None = None) -> dict:
    """One tracker with one matcher on cached detections: ``dict(metrics, seconds)`` or ``dict(skipped=reason)``."""
    from vastmat.apis import init_model, swap_matcher, track_and_score
    from vastmat.structures.tracking import MissingTrackerInput
    cfg = Config.fromfile(TRACKING_BASE)
    cfg.model.tracker = {**member.config(), **(tracker_overrides or {})}
    cfg = swap_matcher(cfg, matcher)
    try:
        metrics, seconds = track_and_score(init_model(cfg), ctx.data_root, det_root, ctx.videos, run_dir,
                                           ctx.preset, extra_det_roots=extra_det_roots)
    except MissingTrackerInput as exc:  # e.g. appearance features the cached detections do not carry
        return dict(skipped=str(exc))
    return dict(metrics=metrics, seconds=seconds, results=osp.join(run_dir, 'results'))


def folder_digest(folder: str) -> str:
    """A short hash of the paths and contents of the files under ``folder`` (cached detections: a few hundred kB),
    less the record of the test that dumped them (:data:`DETECTIONS_DONE`)."""
    import hashlib
    digest = hashlib.sha1()
    for directory, folders, names in sorted(os.walk(folder)):
        folders.sort()
        for name in sorted(set(names) - {DETECTIONS_DONE}):
            path = osp.join(directory, name)
            digest.update(osp.relpath(path, folder).encode())
            with open(path, 'rb') as f:
                digest.update(f.read())
    return digest.hexdigest()[:12]


def part_inputs(ctx: ZooContext, kind: str, config: str, training: Training, iteration: int, checkpoint: str,
                det_root: str, extra_det_roots: dict) -> tuple[str, dict, dict]:
    """The tracker's inputs with a learned part at one checkpoint: ``(det_root, extra_det_roots, tracker
    overrides)``. ``features``: every detection set gets the ReID model's features (dumped under the training's
    work dir); ``motion``: the tracker's ``motion`` is the D2MP of ``config`` with that checkpoint."""
    if kind == 'motion':
        model = Config.fromfile(config).model.to_dict()
        return det_root, extra_det_roots, dict(motion=dict(model, checkpoint=checkpoint))
    if kind == 'features':
        from vastmat.engine.runner_builder import build_quiet_runner
        from vastmat.evaluation.metrics.dump_features import derive_feature_dump, feature_dump_config
        roots, dumped = {}, []
        # the set with the most boxes first (the detector's after NMS 0.95): a set whose boxes are all among a
        # dumped one's takes their features rather than running the ReID model on the same crops again
        sets = sorted(dict(dets=det_root, **extra_det_roots).items(), key=lambda item: -_rows(item[1]))
        for name, root in sets:
            # one dump per (ReID checkpoint, detections): a later run with the same boxes reads it again
            out = osp.join(ctx.work_dir, 'features', osp.basename(training.work_dir), f'iter_{iteration}',
                           f'{name}-{folder_digest(root)}')
            roots[name] = out
            if not osp.isfile(osp.join(out, DONE)):
                source = next((other for other in dumped if derive_feature_dump(root, other, out)), None)
                if source is None:
                    cfg = training_config(ctx, config, f'ReID features of {name} (iteration {iteration})')
                    cfg.work_dir = osp.join(training.work_dir, 'dump')
                    cfg.load_from = checkpoint
                    cfg.test_dataloader.dataset.split = 'test'
                    feature_dump_config(cfg, out, root, ctx.data_root)
                    build_quiet_runner(cfg).test()
                write_json_atomic(dict(checkpoint=checkpoint, det_root=root, features_of=source),
                                  osp.join(out, DONE))
            dumped.append(out)
        return roots.pop('dets'), roots, {}
    raise ValueError(f"zoo_demo_parts: unknown kind {kind!r} (known: 'features', 'motion')")


READ_ROWS_DONE = 'rows_read.json'  # written last in a folder of a detection set's rows a tracker reads


def rows_read_roots(ctx: ZooContext, tracker: dict, det_root: str, extra_det_roots: dict) -> dict:
    """``extra_det_roots`` with the set a tracker reads as its NMS-suppressed boxes (TrackTrack's ``deleted_dets``)
    cut to the rows it reads (:func:`~vastmat.models.trackers.tracktrack_nms.deleted_rows_read` at the lowest
    ``det_thr`` the tracker class's ``deleted_rows_setting`` gives): the ReID model then computes the features of those rows only (a tenth of the demo's
    NMS-0.95 set), not of boxes the tracker never reads; the tracking is the same. Written once per content of
    both sets and threshold (:data:`READ_ROWS_DONE`)."""
    from vastmat.registry import MODELS
    setting_of = getattr(MODELS.get(tracker['type']), 'deleted_rows_setting', None)
    setting = setting_of(tracker) if setting_of is not None else None
    if setting is None or setting[0] not in extra_det_roots:
        return extra_det_roots
    name, det_thr = setting
    source = extra_det_roots[name]
    out = osp.join(ctx.work_dir, f'{osp.basename(source.rstrip(os.sep))}_read_det{det_thr:g}')
    key = dict(main=folder_digest(det_root), extra=folder_digest(source), det_thr=det_thr, videos=sorted(ctx.videos))
    done = osp.join(out, READ_ROWS_DONE)
    if not (osp.isfile(done) and json.load(open(done, encoding='utf-8')).get('key') == key):
        write_rows_read(det_root, source, out, ctx.videos, det_thr)
        write_json_atomic(dict(key=key, source=source), done)
    return {**extra_det_roots, name: out}


def write_rows_read(det_root: str, extra_root: str, out_dir: str, videos: list[str], det_thr: float) -> None:
    """Write ``out_dir/<video>.txt``: the lines of ``extra_root``'s det files (verbatim, in their order) that
    :func:`~vastmat.models.trackers.tracktrack_nms.deleted_rows_read` keeps against ``det_root``'s detections."""
    from vastmat.datasets.detections import VideoDetections, detection_file
    from vastmat.models.trackers.tracktrack_nms import deleted_rows_read
    from vastmat.utils.io import atomic_write
    os.makedirs(out_dir, exist_ok=True)
    for video in videos:
        main = VideoDetections(detection_file(det_root, video))
        path = detection_file(extra_root, video)
        extra = VideoDetections(path)
        with open(path, encoding='utf-8') as f:
            lines = f.read().splitlines()
        keep = []
        for frame in map(int, extra.frames):
            keep.extend(extra.line_numbers(frame)[deleted_rows_read(main.get(frame), extra.get(frame), det_thr)])
        with atomic_write(osp.join(out_dir, f'{video}.txt')) as f:
            f.writelines(f'{lines[n - 1]}\n' for n in sorted(keep))


def _rows(det_root: str) -> int:
    """Lines of the detection files of a folder (``<video>.txt`` or ``<video>/det/det.txt``)."""
    count = 0
    for directory, _, names in os.walk(det_root):
        for name in names:
            if name.endswith('.txt'):
                with open(osp.join(directory, name), 'rb') as f:
                    count += sum(1 for line in f if line.strip())
    return count


def scored_checkpoints(training: Training) -> list[tuple[int, str]]:
    """The kept checkpoints the zoo scores (:data:`SCORED_CHECKPOINTS`): the first and the last; the one between
    them costs a test, or a ReID feature dump, of every test video and is the convergence benchmark's."""
    return training.checkpoints[:1] + training.checkpoints[1:][-1:]


def curve_point(training: Training, iteration: int, run: dict) -> dict:
    metrics = run.get('metrics', {}).get('COMBINED', {})
    return dict(iteration=iteration, minutes=training.minutes(iteration),
                **{key: metrics.get(key, float('nan')) for key in ('HOTA', 'DetA', 'AssA', 'IDF1', 'MOTA')})


# ------------------------------------------------------------------------------------------ joint / end-to-end models
def model_run_dir(training: Training, name: str, preset: str, iteration: int, matcher: str,
                  thresholds: str | None = None) -> str:
    """Where the zoo tests tracker ``name`` on the checkpoint of ``training`` at ``iteration`` with ``matcher``
    (``results/``, ``metrics.json``), at the official thresholds scaled as the calibration grid point named
    ``thresholds`` (:func:`.zoo_calibration.grid_label`; None: the config's own)."""
    folder = 'config_thresholds' if thresholds is None else f'thresholds_x{thresholds}'
    return osp.join(training.work_dir, 'tests', name, preset, folder, f'iter_{iteration}', matcher)


# ------------------------------------------------------------------------------------------------------ linking
def link_runs(ctx: ZooContext, member_results: dict, linker: dict) -> dict:
    """Every tracker's run with its own association, linked (:class:`~vastmat.models.post.GlobalLinker` on its
    results folder, so the eight trackers alike, motion, size and score terms) and scored: ``{tracker:
    dict(metrics, reports, results)}``, written beside the run (``results_linked/``, ``metrics_linked.json``)."""
    from vastmat.apis.linking import link_results_folder
    from vastmat.evaluation.mot_eval import evaluate, sequence_specs
    out = {}
    for tracker, member in member_results.items():
        run = member['runs'].get('original', {})
        if 'results' not in run:
            continue
        folder = osp.join(osp.dirname(run['results']), 'results_linked')
        reports = link_results_folder(run['results'], folder, ctx.videos, linker)
        specs, _ = sequence_specs(ctx.data_root, folder, ctx.videos)
        metrics = evaluate(specs, ctx.preset)
        write_json_atomic(dict(metrics=metrics, reports=reports, linker=linker),
                          osp.join(osp.dirname(folder), 'metrics_linked.json'))
        out[tracker] = dict(metrics=metrics, reports=reports, results=folder)
    return out
