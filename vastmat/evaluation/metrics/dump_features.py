"""``DumpReIDFeatures``: a ReID model's features of cached detections, written as det.txt files with feature
columns (``tools/test.py REID_CONFIG --checkpoint C --det-root DETS --dump-feats OUT``), which the cached-detection
reader (:class:`~vastmat.datasets.LoadTrackingDetections`) passes on to the trackers as ``features``."""
from __future__ import annotations

import copy
import os
import os.path as osp
from collections import defaultdict
from typing import Any, Sequence

import numpy as np
from mmengine.evaluator import BaseMetric
from mmengine.logging import print_log

from vastmat.registry import METRICS
from vastmat.utils.io import atomic_write

DET_COLUMNS = 10  # frame, -1, left, top, width, height, score, -1, -1, -1


def det_rows(path: str) -> list[list[str]]:
    """The rows of a det.txt as their first ten fields, verbatim (``", "`` separators accepted; files with 7 to 9
    columns padded with -1; columns after the tenth, old features, left out); blank lines skipped."""
    rows = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.strip():
                fields = [t.strip() for t in line.split(',')][:DET_COLUMNS]
                rows.append(fields + ['-1'] * (DET_COLUMNS - len(fields)))
    return rows


def write_feature_detections(path: str, rows: list[list[str]], features: np.ndarray) -> None:
    """Write det.txt rows (ten fields each) followed by their feature columns (``%.7g``), atomically."""
    if len(rows) != len(features):
        raise ValueError(f'{path}: {len(rows)} rows but {len(features)} feature vectors')
    with atomic_write(path) as f:
        for fields, feature in zip(rows, features):
            f.write(','.join(fields) + ''.join(f',{v:.7g}' for v in feature.tolist()) + '\n')


def _box_key(fields: list[str]) -> tuple[str, ...]:
    """A det.txt row's frame and box (left, top, width, height), as written: what a crop depends on."""
    return (fields[0], *fields[2:6])


def derive_feature_dump(det_root: str, dumped: str, out_dir: str) -> bool:
    """Write the feature dump of ``det_root``'s detections from ``dumped``, a feature dump of the same videos'
    frames, where every box of ``det_root`` is one of ``dumped``'s (the detector's boxes after NMS at its own IoU are
    among those after NMS 0.95): each row gets the feature columns of the row of the same frame and box, which the
    ReID model computes from the box's crop alone. Every video of ``dumped`` gets a file, as
    :class:`DumpReIDFeatures` writes them. Returns False, writing nothing, where a video or a box is missing."""
    from vastmat.datasets.detections import detection_file
    videos = sorted(name[:-4] for name in os.listdir(dumped) if name.endswith('.txt'))
    files = {}
    for video in videos:
        try:
            path = detection_file(det_root, video)
        except FileNotFoundError:
            return False
        features = {}
        with open(osp.join(dumped, f'{video}.txt'), encoding='utf-8') as f:
            for line in f:
                if line.strip():
                    fields = line.rstrip('\n').split(',')
                    features[_box_key(fields)] = fields[DET_COLUMNS:]
        rows = det_rows(path)
        found = [features.get(_box_key(fields)) for fields in rows]
        if any(feature is None for feature in found):
            return False
        files[video] = [','.join(fields + feature) + '\n' for fields, feature in zip(rows, found)]
    for video, lines in files.items():
        with atomic_write(osp.join(out_dir, f'{video}.txt')) as f:
            f.writelines(lines)
    return True


@METRICS.register_module()
class DumpReIDFeatures(BaseMetric):
    """Collects the ReID model's feature of every detection crop (:class:`~vastmat.datasets.VastMATDetectionCrops`)
    and writes ``<out_dir>/<video>.txt``: the rows of the video's det.txt, in the file's order, as their ten det.txt
    fields followed by the L2-normalised feature. Every video of the dataset gets a file (an empty one when it has no
    detection); each is written to a temporary name and renamed. Returns no metric.

    The data samples need ``video_name`` and ``det_row`` in their metainfo (``PackReIDInputs(meta_keys=...)``;
    :func:`feature_dump_config` adds them) and the dataset's metainfo ``videos``, ``det_files`` and ``num_rows``.
    """

    default_prefix = 'dump'

    def __init__(self, out_dir: str, collect_device: str = 'cpu', prefix: str | None = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.out_dir = out_dir

    def process(self, data_batch: dict, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            for key in ('video_name', 'det_row', 'pred_feature'):
                if key not in sample:
                    raise KeyError(f'DumpReIDFeatures: the data samples have no {key!r}: use VastMATDetectionCrops '
                                   "and add video_name and det_row to PackReIDInputs' meta_keys (tools/test.py "
                                   '--dump-feats does)')
            feature = sample['pred_feature']
            feature = feature.detach().cpu().float().numpy() if hasattr(feature, 'detach') else feature
            self.results.append((sample['video_name'], int(sample['det_row']), np.asarray(feature, np.float32)))

    def compute_metrics(self, results: list) -> dict:
        meta = self.dataset_meta or {}
        missing = [k for k in ('videos', 'det_files', 'num_rows') if k not in meta]
        if missing:
            raise KeyError(f'DumpReIDFeatures: the dataset metainfo has no {", ".join(missing)} (use '
                           'VastMATDetectionCrops)')
        by_video: dict[str, list] = defaultdict(list)
        for video, row, feature in results:
            by_video[video].append((row, feature))
        total, dims = 0, set()
        for video in meta['videos']:
            path = meta['det_files'][video]
            rows = det_rows(path)
            if len(rows) != meta['num_rows'][video]:
                raise RuntimeError(f'{path}: {len(rows)} rows now, {meta["num_rows"][video]} when the dataset was '
                                   'built (the file changed during the run)')
            items = sorted(by_video.get(video, []), key=lambda item: item[0])
            if [row for row, _ in items] != list(range(len(rows))):
                have = {row for row, _ in items}
                lost = [r for r in range(len(rows)) if r not in have]
                raise RuntimeError(f'DumpReIDFeatures: {video}: {len(items)} features for {len(rows)} rows of '
                                   f'{path} (rows without a feature: {lost[:5]})')
            features = (np.stack([f for _, f in items]).astype(np.float64) if items
                        else np.zeros((0, 0), np.float64))
            if len(features):
                dims.add(features.shape[1])
                norms = np.linalg.norm(features, axis=1, keepdims=True)
                features = features / np.maximum(norms, 1e-12)  # torch.nn.functional.normalize's eps
            write_feature_detections(osp.join(self.out_dir, f'{video}.txt'), rows, features)
            total += len(rows)
        print_log(f'DumpReIDFeatures: {total} features (dimension {", ".join(map(str, sorted(dims))) or "-"}) of '
                  f'{len(meta["videos"])} videos written to {self.out_dir}', 'current')
        return {}


def feature_dump_config(cfg: Any, out_dir: str, det_root: str, data_root: str | None = None) -> None:
    """Turn a ReID config's test part into the feature dump: the test dataset becomes the detection crops of
    ``det_root`` over the same videos (the config's test split; with ``data_root`` that root's split, or all videos
    of a MOTChallenge split folder), with the config's test pipeline (whose ``PackReIDInputs`` gets the keys the
    dumper needs), and the evaluator :class:`DumpReIDFeatures`."""
    from mmdet.models.reid import BaseReID

    from vastmat.datasets.sequences import is_vastmat_root
    from vastmat.registry import MODELS
    model_type = cfg.model.get('type')
    model_cls = MODELS.get(model_type) if isinstance(model_type, str) else None
    if model_cls is None or not issubclass(model_cls, BaseReID):
        raise ValueError(f"--dump-feats needs a ReID config (model.type='BaseReID'), not model.type={model_type!r}")
    source = cfg.test_dataloader.dataset
    pipeline = copy.deepcopy(list(source.get('pipeline', [])))
    types = [t.get('type') for t in pipeline]
    if 'CropReIDInstance' not in types or 'PackReIDInputs' not in types:
        raise ValueError(f'--dump-feats: the test pipeline of the config ({types}) must crop the boxes '
                         '(CropReIDInstance) and pack them (PackReIDInputs)')
    for transform in pipeline:
        if transform.get('type') == 'PackReIDInputs':
            keys = transform.get('meta_keys') or ()
            keys = (keys, ) if isinstance(keys, str) else tuple(keys)
            transform['meta_keys'] = tuple(dict.fromkeys(keys + ('video_name', 'det_row')))
    dataset = dict(type='VastMATDetectionCrops', data_root=data_root or source.get('data_root'), det_root=det_root,
                   pipeline=pipeline)
    if source.get('videos') is not None:
        dataset['videos'] = source['videos']
    elif not (data_root and not is_vastmat_root(data_root)):
        dataset.update(protocol=source.get('protocol'), split=source.get('split'))
    cfg.test_dataloader.dataset = dataset
    cfg.test_dataloader.sampler = dict(type='DefaultSampler', shuffle=False, round_up=False)
    cfg.test_evaluator = dict(type='DumpReIDFeatures', out_dir=out_dir)
