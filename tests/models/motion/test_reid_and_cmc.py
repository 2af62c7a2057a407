"""Appearance model and camera motion: the ReID crop datasets, the tiny ReID model trained by tools/train.py on the
demo crops, ``tools/test.py --dump-feats`` (det.txt rows plus L2-normalised features, read back by the
cached-detection reader), ECC camera motion on images, GMC files and ``tools/test.py --dump-warps``."""
import os
import os.path as osp

import cv2
import numpy as np
import pytest
import torch

from helpers.common import DEBUG_YOLOX, REPO, read_results, tool

# one worker runs them all, so that the trained ReID model is made once (pytest-xdist --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('reid_and_cmc')]

TINY_REID = osp.join(REPO, 'configs', 'reid', 'reid_tiny_vastmat-demo.py')
FULL_REID = osp.join(REPO, 'configs', 'reid', 'reid_r50_1xb64-6e_vastmat-p1.py')


def reid_root_options(root: str) -> list:
    root = root.rstrip('/') + '/'
    return [f'train_dataloader.dataset.data_root={root}', f'val_dataloader.dataset.data_root={root}',
            f'test_dataloader.dataset.data_root={root}']


def build_dataset(**kwargs):
    from mmengine.registry import init_default_scope

    from vastmat.registry import DATASETS
    init_default_scope('vastmat')
    return DATASETS.build(kwargs)


# ------------------------------------------------------------------------------------------------- crop dataset
def expected_crops(root, split, frame_interval, max_per_id, min_size=0.0):
    """(video, id, frame, box) of the crops, computed from the gt files independently of the dataset."""
    from vastmat.datasets.formats import read_gt
    from vastmat.datasets.sequences import read_split
    out = []
    for video in read_split(root, 'protocol1', split):
        gt = read_gt(osp.join(root, 'videos', video, 'gt', 'gt.txt'))
        for track_id in sorted(set(gt.ids.tolist())):
            rows = [r for r in np.flatnonzero(gt.ids == track_id)
                    if gt.valid[r] == 1 and min(gt.boxes[r, 2:]) >= min_size]
            rows = sorted(rows, key=lambda r: gt.frames[r])[::frame_interval]
            if len(rows) > max_per_id:
                rows = [rows[i] for i in sorted(set(np.round(np.linspace(0, len(rows) - 1, max_per_id)).astype(int)))]
            for r in rows:
                left, top, width, height = gt.boxes[r]
                out.append((video, track_id, int(gt.frames[r]), [left, top, left + width, top + height]))
    return out


def test_crop_dataset_labels_and_boxes(demo_root):
    dataset = build_dataset(type='VastMATReIDDataset', data_root=demo_root, protocol='protocol1', split='train',
                            frame_interval=3, max_per_id=3, pipeline=[])
    expected = expected_crops(demo_root, 'train', 3, 3)
    items = [dataset.get_data_info(i) for i in range(len(dataset))]
    assert [(d['video_name'], d['instance_id'], d['frame']) for d in items] == [e[:3] for e in expected]
    np.testing.assert_allclose([d['crop_bbox'] for d in items], [e[3] for e in expected])
    # identities numbered 0..K-1 over the split, video by video (split order), then by gt id
    identities = list(dict.fromkeys((e[0], e[1]) for e in expected))
    assert dataset.identities == identities and dataset.num_ids == len(identities) == 30
    assert [int(d['gt_label']) for d in items] == [identities.index((e[0], e[1])) for e in expected]
    assert items[0]['img_path'] == osp.join(demo_root, 'videos', items[0]['video_name'], 'img1',
                                            f'{items[0]["frame"]:06d}.jpg')
    # min_size leaves out small boxes, max_per_id caps every identity
    small = build_dataset(type='VastMATReIDDataset', data_root=demo_root, protocol='protocol1', split='train',
                          min_size=20, max_per_id=2, pipeline=[])
    assert len(small) == len(expected_crops(demo_root, 'train', 1, 2, min_size=20))
    assert all(min(np.subtract(d['crop_bbox'][2:], d['crop_bbox'][:2])) >= 20
               for d in (small.get_data_info(i) for i in range(len(small))))
    assert max(np.bincount([int(small.get_data_info(i)['gt_label']) for i in range(len(small))])) <= 2


def test_crop_dataset_refuses_bad_settings(demo_root):
    with pytest.raises(ValueError, match='30 identities but num_classes is 10: set model.head.num_classes'):
        build_dataset(type='VastMATReIDDataset', data_root=demo_root, protocol='protocol1', split='train',
                      num_classes=10, pipeline=[])
    with pytest.raises(ValueError, match='num_ids=40 but .* has only 30 identities'):
        build_dataset(type='VastMATReIDDataset', data_root=demo_root, protocol='protocol1', split='train',
                      triplet_sampler=dict(num_ids=40, ins_per_id=2), pipeline=[])
    with pytest.raises(ValueError, match='no identity crops'):
        build_dataset(type='VastMATReIDDataset', data_root=demo_root, protocol='protocol1', split='train',
                      min_size=1e6, pipeline=[])


def test_crop_box_rounds_and_clips():
    from vastmat.datasets.reid_crops import crop_box
    image = np.arange(10 * 12 * 3, dtype=np.uint8).reshape(10, 12, 3)
    np.testing.assert_array_equal(crop_box(image, [1.4, 2.6, 5.5, 7.2]), image[3:7, 1:6])  # np.round: 5.5 -> 6
    np.testing.assert_array_equal(crop_box(image, [-5, -3, 4, 4]), image[0:4, 0:4])
    np.testing.assert_array_equal(crop_box(image, [20, 3, 30, 5]), image[3:5, 11:12])  # outside: one pixel wide
    crop = crop_box(image, [0, 0, 12, 10])
    crop[0, 0] = 255
    assert image[0, 0, 0] == 0  # a copy


def test_pipeline_packs_crops_and_triplet_batches(demo_root):
    from vastmat.datasets.reid_crops import crop_box
    from mmengine.config import Config
    cfg = Config.fromfile(TINY_REID)
    test_set = build_dataset(**dict(cfg.test_dataloader.dataset.to_dict(), data_root=demo_root))
    packed = test_set[0]
    info = test_set.get_data_info(0)
    frame = cv2.imread(info['img_path'])
    expected = cv2.resize(crop_box(frame, info['crop_bbox']), (32, 64), interpolation=cv2.INTER_LINEAR)
    assert packed['inputs'].shape == (1, 3, 64, 32)
    np.testing.assert_array_equal(packed['inputs'][0].numpy().transpose(1, 2, 0), expected)
    assert int(packed['data_samples'].gt_label.label) == int(info['gt_label'])
    train_cfg = dict(cfg.train_dataloader.dataset.to_dict(), data_root=demo_root)
    train_set = build_dataset(**train_cfg)
    assert len(train_set) == train_set.num_ids == 30  # anchors='identities': one P x K batch per identity
    np.random.seed(0)
    batch = train_set[5]
    labels = batch['data_samples'].gt_label.label.tolist()
    assert batch['inputs'].shape == (8, 3, 64, 32)
    assert labels[:2] == [5, 5] and len(set(labels)) == 4 and all(labels.count(x) == 2 for x in labels)


# ------------------------------------------------------------------------------------------ training and dumping
@pytest.fixture(scope='module')
def trained_reid(demo_root, tmp_path_factory):
    """The tiny ReID config trained 3 iterations on the demo crops by tools/train.py; its checkpoint."""
    work_dir = str(tmp_path_factory.mktemp('reid_tiny'))
    tool('tools/train.py', TINY_REID, '--work-dir', work_dir, '--cfg-options', *reid_root_options(demo_root))
    return osp.join(work_dir, 'iter_3.pth')


def test_tiny_reid_trains_with_triplet_and_cross_entropy(trained_reid):
    checkpoint = torch.load(trained_reid, weights_only=True)
    assert checkpoint['meta']['iter'] == 3
    assert checkpoint['state_dict']['head.classifier.weight'].shape == (30, 32)  # 30 demo identities, 32-d
    history = checkpoint['message_hub']['log_scalars']
    for key in ('train/triplet_loss', 'train/ce_loss'):
        values = history[key]['log_history']
        assert len(values) == 3 and all(np.isfinite(values)) and values[0] > 0


def test_full_size_config_builds():
    from mmengine.config import Config
    from mmengine.registry import init_default_scope

    from vastmat.registry import MODELS
    init_default_scope('vastmat')
    cfg = Config.fromfile(FULL_REID)
    model = MODELS.build(cfg.model)  # weights are only loaded by init_weights (the runner)
    assert type(model.backbone).__name__ == 'ResNet' and model.backbone.depth == 50
    assert model.head.loss_triplet is not None and model.head.loss_cls is not None
    assert [t['scale'] for t in cfg.test_dataloader.dataset.pipeline if t['type'] == 'Resize'] == [(128, 384)]
    with torch.no_grad():
        model.eval()
        out = model(torch.zeros(2, 3, 384, 128), mode='tensor')
    assert out.shape == (2, 128)


@pytest.fixture(scope='module')
def dumped_features(trained_reid, demo_root, tmp_path_factory):
    """Detections of the test videos (their gt boxes, in det.txt files of different forms) and the features
    tools/test.py --dump-feats wrote for them."""
    from vastmat.datasets.formats import read_gt
    from vastmat.datasets.sequences import read_split
    det_root = tmp_path_factory.mktemp('dets')
    videos = read_split(demo_root, 'protocol1', 'test')
    for k, video in enumerate(videos):
        gt = read_gt(osp.join(demo_root, 'videos', video, 'gt', 'gt.txt'))
        order = np.argsort(-gt.frames, kind='stable') if k == 0 else np.arange(len(gt))  # rows not in frame order
        lines = []
        for r in order:
            left, top, width, height = gt.boxes[r]
            score = 0.5 + 0.05 * (r % 10)
            if k == 1:  # seven columns and ', ' separators
                lines.append(f'{gt.frames[r]}, -1, {left:.2f}, {top:.2f}, {width:.2f}, {height:.2f}, {score:.3f}')
            else:
                lines.append(f'{gt.frames[r]},-1,{left:.3f},{top:.3f},{width:.3f},{height:.3f},{score:.4f},-1,-1,-1')
        if k == 0:  # one box partly outside the frame, one duplicate
            lines += ['1,-1,-20.5,-10,40,30,0.9,-1,-1,-1', lines[0]]
        if k == 2:  # a video without detections
            lines = ['']
        (det_root / f'{video}.txt').write_text('\n'.join(lines) + '\n')
    out = tmp_path_factory.mktemp('feats')
    tool('tools/test.py', TINY_REID, '--checkpoint', trained_reid, '--det-root', det_root, '--dump-feats', out,
         '--data-root', demo_root, '--work-dir', tmp_path_factory.mktemp('reid_test'))
    return det_root, out, videos


def test_dump_feats_writes_det_rows_with_normalised_features(dumped_features):
    det_root, out, videos = dumped_features
    assert sorted(os.listdir(out)) == sorted(f'{v}.txt' for v in videos)  # no temporary file left
    for k, video in enumerate(videos):
        rows_in = [[t.strip() for t in line.split(',')] for line in open(det_root / f'{video}.txt') if line.strip()]
        rows_out = [line.rstrip('\n').split(',') for line in open(out / f'{video}.txt')]
        assert len(rows_out) == len(rows_in) and (len(rows_in) == 0) == (k == 2)
        if k == 2:
            continue
        for a, b in zip(rows_in, rows_out):
            assert b[:10] == (a + ['-1'] * 3 if k == 1 else a)  # the same rows, same order, ten columns
        features = np.array([[float(v) for v in row[10:]] for row in rows_out])
        assert features.shape[1] == 32
        np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1.0, atol=1e-6)
    first = [line.split(',', 10) for line in open(out / f'{videos[0]}.txt')]
    assert first[-1] == first[0]  # the duplicate box has the same feature


def test_dumped_features_equal_runner_free_extraction_and_round_trip(dumped_features, trained_reid, demo_root):
    from vastmat.apis import init_model
    from vastmat.datasets.detections import VideoDetections
    from vastmat.datasets.formats import read_detections
    from vastmat.models.reid import reid_features
    _, out, videos = dumped_features
    model = init_model(TINY_REID, trained_reid)
    video = videos[0]
    path = str(out / f'{video}.txt')
    dets = read_detections(path)
    in_frame = np.flatnonzero(dets.frames == 1)
    frame = cv2.imread(osp.join(demo_root, 'videos', video, 'img1', '000001.jpg'))
    boxes = np.column_stack([dets.boxes[in_frame, :2], dets.boxes[in_frame, :2] + dets.boxes[in_frame, 2:]])
    np.testing.assert_allclose(reid_features(model, frame, boxes, (64, 32)), dets.features[in_frame], atol=1e-5)
    # the cached-detection reader passes the columns on as features, row for row
    cached = VideoDetections(path).get(1)
    assert cached.features.shape == (len(in_frame), 32)
    np.testing.assert_allclose(cached.bboxes, boxes)
    np.testing.assert_array_equal(cached.features, dets.features[in_frame])


def test_a_dump_of_boxes_among_a_dumped_sets_is_derived_from_it(dumped_features, trained_reid, demo_root, tmp_path):
    """The zoo's detections after the detector's NMS are among those after NMS 0.95: their features are taken from
    that dump (vastmat/experiments/zoo_scoring.py), equal to a dump of their own; a box or a video that the dumped
    set lacks leaves it to the ReID model, with nothing written."""
    from vastmat.evaluation.metrics.dump_features import derive_feature_dump
    _, dumped, videos = dumped_features
    subset = tmp_path / 'subset'
    subset.mkdir()
    for video in videos:  # every other row, last first, another score (a crop depends on its frame and box only)
        rows = [line.split(',')[:10] for line in open(dumped / f'{video}.txt')][::-2]
        (subset / f'{video}.txt').write_text(''.join(','.join(r[:6] + ['0.5'] + r[7:]) + '\n' for r in rows))
    derived = tmp_path / 'derived'
    assert derive_feature_dump(str(subset), str(dumped), str(derived))
    direct = tmp_path / 'direct'
    tool('tools/test.py', TINY_REID, '--checkpoint', trained_reid, '--det-root', subset, '--dump-feats', direct,
         '--data-root', demo_root, '--work-dir', tmp_path / 'work')
    assert sorted(os.listdir(derived)) == sorted(os.listdir(direct)) == sorted(f'{v}.txt' for v in videos)
    for video in videos:
        ours, theirs = ([line.rstrip('\n').split(',') for line in open(folder / f'{video}.txt')]
                        for folder in (derived, direct))
        assert [row[:10] for row in ours] == [row[:10] for row in theirs]
        if ours:
            np.testing.assert_allclose(np.array([row[10:] for row in ours], float),
                                       np.array([row[10:] for row in theirs], float), atol=1e-6)
    with open(subset / f'{videos[0]}.txt', 'a') as f:
        f.write('1,-1,1.5,2.5,30,40,0.9,-1,-1,-1\n')  # a box the dumped set lacks
    assert not derive_feature_dump(str(subset), str(dumped), str(tmp_path / 'none'))
    (subset / f'{videos[0]}.txt').unlink()
    assert not derive_feature_dump(str(subset), str(dumped), str(tmp_path / 'none'))
    assert not osp.exists(tmp_path / 'none')


def test_dump_feats_on_detections_that_are_all_empty(trained_reid, demo_root, tmp_path):
    """A detector that found nothing above its threshold: every video still gets its (empty) file."""
    from vastmat.datasets.sequences import read_split
    videos = read_split(demo_root, 'protocol1', 'test')
    for video in videos:
        (tmp_path / f'{video}.txt').write_text('')
    tool('tools/test.py', TINY_REID, '--checkpoint', trained_reid, '--det-root', tmp_path, '--dump-feats',
         tmp_path / 'out', '--data-root', demo_root, '--work-dir', tmp_path / 'work')
    assert sorted(os.listdir(tmp_path / 'out')) == sorted(f'{v}.txt' for v in videos)
    assert all(osp.getsize(tmp_path / 'out' / f'{v}.txt') == 0 for v in videos)


def test_dump_feats_needs_det_root_and_a_reid_config(demo_root, tmp_path):
    with pytest.raises(SystemExit) as done:
        tool('tools/test.py', TINY_REID, '--dump-feats', tmp_path)
    assert done.value.code == 2
    with pytest.raises(ValueError, match="--dump-feats needs a ReID config"):
        tool('tools/test.py', DEBUG_YOLOX, '--det-root', tmp_path, '--dump-feats', tmp_path / 'o')


# ---------------------------------------------------------------------------------------------- camera motion
def textured(height=200, width=260, seed=0):
    rng = np.random.default_rng(seed)
    return cv2.GaussianBlur(rng.uniform(0, 255, (height, width, 3)).astype(np.float32), (0, 0), 3)


def image_frame(image, frame_id, scale=(1.0, 1.0), video='v'):
    from vastmat.structures.tracking import TrackingFrame
    height, width = image.shape[:2]
    return TrackingFrame.from_arrays(np.zeros((0, 4)), np.zeros(0), frame_id, video_name=video,
                                     image=torch.from_numpy(image.transpose(2, 0, 1).copy()),
                                     image_size=(height / scale[1], width / scale[0]), scale_factor=scale)


@pytest.mark.parametrize('scale', [(1.0, 1.0), (0.5, 0.5), (0.5, 0.25)])
def test_ecc_recovers_a_translation_in_original_pixels(scale):
    from vastmat.models.motion import ECCCameraMotion
    first = textured()
    # the content moves by (+3, -2) image pixels: a point of the previous frame is 3 px right, 2 px up
    second = cv2.warpAffine(first, np.float32([[1, 0, 3], [0, 1, -2]]), (260, 200), borderMode=cv2.BORDER_REFLECT)
    ecc = ECCCameraMotion()
    np.testing.assert_array_equal(ecc.warp(image_frame(first, 1, scale)), np.eye(2, 3))
    warp = ecc.warp(image_frame(second, 2, scale))
    assert warp.dtype == np.float64 and warp.shape == (2, 3)
    np.testing.assert_allclose(warp, [[1, 0, 3 / scale[0]], [0, 1, -2 / scale[1]]], atol=0.02)
    ecc.reset()  # a new video starts with the identity
    np.testing.assert_array_equal(ecc.warp(image_frame(second, 1, scale)), np.eye(2, 3))


def test_ecc_errors_and_non_convergence():
    from vastmat.models.motion import ECCCameraMotion
    from vastmat.structures.tracking import MissingTrackerInput, TrackingFrame
    with pytest.raises(ValueError, match='affine'):
        ECCCameraMotion(warp_mode='cv2.MOTION_HOMOGRAPHY')
    ecc = ECCCameraMotion()
    ecc.warp(image_frame(textured(), 1))
    with pytest.raises(ValueError, match='frame 3 follows frame 1'):
        ecc.warp(image_frame(textured(), 3))
    with pytest.raises(MissingTrackerInput, match="needs 'image'"):
        ecc.warp(TrackingFrame.from_arrays(np.zeros((0, 4)), np.zeros(0), 2, video_name='v'))
    flat = np.full((40, 50, 3), 7.0, np.float32)  # nothing to align: ECC fails, the warp is the identity
    ecc.reset()
    ecc.warp(image_frame(flat, 1))
    np.testing.assert_array_equal(ecc.warp(image_frame(flat, 2)), np.eye(2, 3))
    assert ecc.failures == 1


def official_gmc_lines(warps):
    """GMC lines as the official files lay them out (``trackers/cmc/GMC-MOT17-02.txt``)."""
    return ''.join(f'{i}\t' + ''.join(f'{v:.6f}\t' for v in w.ravel()) + '\n' for i, w in enumerate(warps))


def test_cached_warps_round_trip(tmp_path):
    from vastmat.models.motion import CachedCameraMotion
    from vastmat.models.motion.camera_motion import read_warp_file, write_warp_file
    from vastmat.structures.tracking import TrackingFrame
    rng = np.random.default_rng(1)
    warps = np.tile(np.eye(2, 3), (5, 1, 1)) + rng.normal(0, [[0.001, 0.001, 2], [0.001, 0.001, 2]], (5, 2, 3))
    warps[0] = np.eye(2, 3)
    write_warp_file(str(tmp_path / 'GMC-video_a.txt'), warps)
    text = (tmp_path / 'GMC-video_a.txt').read_text()
    assert text == official_gmc_lines(warps)
    assert text.splitlines()[0] == '0\t1.000000\t0.000000\t0.000000\t0.000000\t1.000000\t0.000000\t'
    np.testing.assert_allclose(read_warp_file(str(tmp_path / 'GMC-video_a.txt')), warps, atol=5e-7)
    (tmp_path / 'video_b.txt').write_text(official_gmc_lines(warps[::-1]).replace('\t\n', '\n'))  # plain name
    cached = CachedCameraMotion(warp_root=str(tmp_path))
    empty = dict(bboxes=np.zeros((0, 4)), scores=np.zeros(0))
    for frame_id in (3, 1, 5):  # by position: frame k takes line k
        got = cached.warp(TrackingFrame.from_arrays(frame_id=frame_id, video_name='video_a', **empty))
        np.testing.assert_allclose(got, warps[frame_id - 1], atol=5e-7)
    got = cached.warp(TrackingFrame.from_arrays(frame_id=1, video_name='video_b', **empty))
    np.testing.assert_allclose(got, warps[-1], atol=5e-7)
    # the official file names of MOT17 sequences without the detector suffix
    (tmp_path / 'GMC-MOT17-02.txt').write_text(official_gmc_lines(warps))
    got = cached.warp(TrackingFrame.from_arrays(frame_id=2, video_name='MOT17-02-FRCNN', **empty))
    np.testing.assert_allclose(got, warps[1], atol=5e-7)


def test_cached_warps_errors_name_the_file_and_line(tmp_path):
    from vastmat.datasets.formats import FormatError
    from vastmat.models.motion import CachedCameraMotion
    from vastmat.structures.tracking import TrackingFrame
    good = official_gmc_lines(np.tile(np.eye(2, 3), (3, 1, 1)))
    (tmp_path / 'GMC-short.txt').write_text(good)
    lines = good.splitlines(keepends=True)
    (tmp_path / 'GMC-fields.txt').write_text(lines[0] + '1\t1.0\t0.0\t0.0\t0.0\t1.0\t\n' + lines[2])
    (tmp_path / 'GMC-text.txt').write_text(lines[0] + lines[1] + '2\t1.0\t0.0\tabc\t0.0\t1.0\t0.0\t\n')
    cached = CachedCameraMotion(warp_root=str(tmp_path))

    def frame(video, frame_id):
        return TrackingFrame.from_arrays(np.zeros((0, 4)), np.zeros(0), frame_id, video_name=video)

    with pytest.raises(FormatError, match=r'GMC-short\.txt: 3 lines, but video .short. frame 4 needs line 4'):
        cached.warp(frame('short', 4))
    with pytest.raises(FormatError, match=r'GMC-fields\.txt:2: 6 fields, expected 7'):
        cached.warp(frame('fields', 1))
    with pytest.raises(FormatError, match=r"GMC-text\.txt:3: 'abc' is not a number"):
        cached.warp(frame('text', 1))
    with pytest.raises(FileNotFoundError, match=r"video 'missing'.*GMC-missing\.txt"):
        cached.warp(frame('missing', 1))


@pytest.fixture(scope='module')
def dumped_warps(demo_root, tmp_path_factory):
    """tools/test.py --dump-warps on the debug YOLOX config (its test pipeline loads and resizes the frames)."""
    out = tmp_path_factory.mktemp('warps')
    tool('tools/test.py', DEBUG_YOLOX, '--dump-warps', out, '--data-root', demo_root, '--work-dir',
         tmp_path_factory.mktemp('warps_work'))
    return out


def test_dump_warps_writes_gmc_files_of_the_test_videos(dumped_warps, demo_root, tmp_path):
    from vastmat.datasets.sequences import read_split
    from vastmat.models.motion import CachedCameraMotion
    from vastmat.models.motion.camera_motion import read_warp_file
    from vastmat.structures.tracking import TrackingFrame
    out = dumped_warps
    videos = read_split(demo_root, 'protocol1', 'test')
    assert sorted(os.listdir(out)) == sorted(f'{v}.txt' for v in videos)
    for video in videos:
        warps = read_warp_file(str(out / f'{video}.txt'))
        assert warps.shape == (12, 2, 3)  # one line per frame
        np.testing.assert_array_equal(warps[0], np.eye(2, 3))
        # the demo's camera does not move: small residual motion from the animals only
        assert np.abs(warps[:, :, 2]).max() < 1.0 and np.abs(warps[:, :, :2] - np.eye(2)).max() < 0.01
    with pytest.raises(ValueError, match='does not give frames of videos'):  # a ReID config's items are crops
        tool('tools/test.py', TINY_REID, '--dump-warps', tmp_path / 'bad', '--data-root', demo_root)
    cached = CachedCameraMotion(str(out))
    last = cached.warp(TrackingFrame.from_arrays(np.zeros((0, 4)), np.zeros(0), 12, video_name=videos[0]))
    np.testing.assert_allclose(last, read_warp_file(str(out / f'{videos[0]}.txt'))[11])


def test_tracktrack_runs_on_dumped_features_and_warps(dumped_features, dumped_warps, demo_root, tmp_path):
    """End to end: the trained ReID model's features and the ECC warps feed TrackTrack on cached detections."""
    det_root, feats, videos = dumped_features
    config = osp.join(REPO, 'configs', 'tracktrack', 'tracktrack_cached-dets.py')
    metrics = tool('tools/test.py', config, '--det-root', feats, '--extra-det-root', f'nms95={det_root}',
                   '--data-root', demo_root, '--work-dir', tmp_path, '--cfg-options',
                   f'model.tracker.camera_motion.warp_root={dumped_warps}', 'model.post_processors=[]')
    assert sorted(os.listdir(tmp_path / 'results')) == sorted(f'{v}.txt' for v in videos)
    rows = [len(read_results(tmp_path / 'results' / f'{v}.txt')) for v in videos]
    assert rows[0] > 0 and rows[1] > 0 and rows[2] == 0  # the third video has no detection
    assert metrics['vastmat/HOTA'] > 0.1
