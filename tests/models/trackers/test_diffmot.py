"""DiffMOT: the D2MP motion model (loss, parameter counts, seeded sampling), its training windows and tiny training,
and the tracker against the official code's own output (tests/fixtures/diffmot_official) with every matcher."""
import gzip
import math
import os.path as osp

import numpy as np
import pytest
import torch

from helpers.common import REPO, SHARED_DATA, assert_same_tracks, read_results, tool
from helpers.diffmot_inputs import ENCODER_DIM, TF_LAYER, VIDEOS, golden_d2mp_state, write_feature_dets

from vastmat.models.motion.d2mp import D2MP
from vastmat.structures.tracking import MissingTrackerInput, TrackingFrame

AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
ANIMALTRACK = osp.join(SHARED_DATA, 'AnimalTrack', 'train')
FIXTURES = osp.join(REPO, 'tests', 'fixtures', 'diffmot_official')
TINY_CONFIG = osp.join(REPO, 'configs', 'diffmot', 'diffmot_tiny_cached-dets.py')
needs_at10 = pytest.mark.skipif(not osp.isdir(osp.join(AT10, 'dets')), reason=f'{AT10}: not found (../shared/data '
                                'beside the clone)')


@pytest.fixture(scope='module')
def full_d2mp():
    torch.manual_seed(0)
    return D2MP()


def tiny_d2mp(zero_motion: bool = False) -> D2MP:
    torch.manual_seed(0)
    model = D2MP(encoder_dim=ENCODER_DIM, tf_layer=TF_LAYER)
    if zero_motion:  # the last MFL outputs exactly 0: every predicted delta is 0
        for p in model.diffusion.net.linear.parameters():
            torch.nn.init.zeros_(p)
    model.has_weights = True
    return model.eval()


# ------------------------------------------------------------------------------------------------------------ D2MP
def linear(i, o, bias=True):
    return i * o + (o if bias else 0)


def encoder_layer(d, ff):  # MultiheadAttention (in_proj 3d x d + 3d, out_proj), two linears, two LayerNorms
    return linear(d, 3 * d) + linear(d, d) + linear(d, ff) + linear(ff, d) + 2 * 2 * d


def mfl(i, o, ctx):  # _layer, _hyper_bias (no bias), _hyper_gate
    return linear(i, o) + linear(ctx, o, bias=False) + linear(ctx, o)


def test_d2mp_parameter_counts_are_the_official_modules(full_d2mp):
    # official History_motion_embedding(d_model 256, 8 heads, ff 512, 6 layers) and HMINet(context 256, tf_layer 3)
    history = 256 + linear(8, 256) + 6 * encoder_layer(256, 512)
    ctx = 256 + 3
    mfls = (mfl(4, 128, ctx) + mfl(128, 256, ctx) + mfl(256, 512, ctx) + mfl(512, 256, ctx) + mfl(256, 128, ctx)
            + mfl(128, 4, ctx))
    templates = encoder_layer(512, 1024) + encoder_layer(256, 512)  # `layer`, `layer2`: registered, never run
    hminet = mfls + 3 * encoder_layer(512, 1024) + 3 * encoder_layer(256, 512) + templates
    assert (history, hminet, templates) == (3_165_184, 11_515_936, 2_629_888)
    count = sum(p.numel() for p in full_d2mp.parameters())
    assert count == history + hminet == 14_681_120  # "14.68M"
    assert sum(p.numel() for p in full_d2mp.encoder.parameters()) == history
    state = full_d2mp.state_dict()
    assert sum(v.numel() for k, v in state.items() if not k.endswith('.pe') and '.var_sched.' not in k) == count
    # the official module names, so that an official checkpoint loads as it is
    for key in ('encoder.cls_token', 'encoder.trca.5.self_attn.in_proj_weight', 'encoder.proj.weight',
                'diffusion.net.layer.linear1.weight', 'diffusion.net.layer2.norm2.bias',
                'diffusion.net.transformer_encoder.layers.2.self_attn.out_proj.weight',
                'diffusion.net.concat1_3._hyper_gate.bias', 'diffusion.net.linear._hyper_bias.weight',
                'diffusion.net.pos_emb.pe', 'diffusion.var_sched.betas'):
        assert key in state, key

    # used in the forward pass: every parameter but the two templates receives a gradient
    full_d2mp.zero_grad()
    conds, deltas = torch.randn(3, 5, 8) * 0.01, torch.randn(3, 4) * 0.01
    full_d2mp.loss_from(conds, deltas, t=torch.tensor([0.2, 0.5, 0.9]), noise=torch.randn(3, 4)).backward()
    used = sum(p.numel() for p in full_d2mp.parameters() if p.grad is not None)
    unused = {n.split('.')[2] for n, p in full_d2mp.named_parameters() if p.grad is None}
    full_d2mp.zero_grad(set_to_none=True)
    assert used == count - templates == 12_051_232 and unused == {'layer', 'layer2'}


def smooth_l1(x):
    return 0.5 * x * x if abs(x) < 1 else abs(x) - 0.5


def test_d2mp_loss_on_a_fixed_input_is_the_formula():
    model = tiny_d2mp()
    last = model.diffusion.net.linear  # make the net output the constant C_hat = 0.5 * b (sigmoid(0) = 0.5)
    b = torch.tensor([0.2, -0.4, 0.1, 3.0])
    for p in last.parameters():
        torch.nn.init.zeros_(p)
    last._layer.bias.data.copy_(b)
    x0 = torch.tensor([[0.1, -0.2, 0.05, 0.0], [0.5, 0.3, -0.4, 2.0]])
    t = torch.tensor([0.25, 0.64])
    noise = torch.tensor([[0.3, -1.2, 0.7, 0.1], [-0.5, 0.2, 1.5, -0.9]])
    loss = model.loss_from(torch.zeros(2, 5, 8), x0, t=t, noise=noise).item()

    # by hand: C = -x0, x_t = x0 + C t + sqrt(t) eps, eps_hat = (x_t - (t - 1) C_hat) / sqrt(t), so
    # C_hat - C = C_hat + x0 and eps_hat - eps = (1 - t) (x0 + C_hat) / sqrt(t) (the noise cancels)
    eps = 0.001
    total = 0.0
    for i, ti in enumerate((0.25, 0.64)):
        w1 = (ti * ti - ti + 1) / ti
        w2 = (ti * ti - ti + 1) / (1 - ti + eps)
        for k in range(4):
            d = 0.5 * float(b[k]) + float(x0[i, k])
            total += w1 * smooth_l1(d) + w2 * smooth_l1((1 - ti) * d / math.sqrt(ti))
    expected = total / 8
    assert loss == pytest.approx(expected, rel=1e-5)
    assert loss == pytest.approx(1.5052278416, rel=1e-6)
    # mode='loss' (the runner's path) draws t and the noise itself
    out = model(torch.zeros(2, 5, 8), x0, mode='loss')
    assert set(out) == {'loss'} and torch.isfinite(out['loss'])


def test_sampling_is_deterministic_under_a_seed_and_follows_the_official_one_step_sampler(full_d2mp):
    model = full_d2mp.eval()
    conds = torch.randn(7, 5, 8, generator=torch.Generator().manual_seed(1)) * 0.02
    with torch.no_grad():
        a = model.predict_deltas(conds, torch.Generator().manual_seed(3))
        b = model.predict_deltas(conds, torch.Generator().manual_seed(3))
        c = model.predict_deltas(conds, torch.Generator().manual_seed(4))
    assert torch.equal(a, b) and not torch.allclose(a, c)
    assert a.shape == (7, 4) and a.abs().max() <= 1.0
    # official sample(): x_T ~ N(0, I) from the generator, t = 1, output -C_hat(x_T) clamped to [-1, 1] (up to the
    # rounding of its arithmetic); the inference path equals the modules' forward
    generator = torch.Generator().manual_seed(3)
    x_t = torch.randn((7, 4), generator=generator)
    with torch.no_grad():
        context = model.encoder(conds).reshape(7, -1)
        c_hat = model.diffusion.net(x_t, beta=torch.zeros(7), context=context)
    assert torch.allclose(a, (-c_hat).clamp(-1, 1), atol=2e-6)
    with torch.enable_grad():  # autograd on: the module path
        assert torch.allclose(model.predict_deltas(conds, torch.Generator().manual_seed(3)), a, atol=2e-6)
    # a second (B, 4) normal is drawn and unused, as the official zero-variance step, so that a generator seeded s
    # reproduces the official numbers under torch.manual_seed(s)
    torch.randn((7, 4), generator=generator)
    after = torch.Generator().manual_seed(3)
    with torch.no_grad():
        model.predict_deltas(conds, after)
    assert torch.equal(torch.randn(3, generator=after), torch.randn(3, generator=generator))
    assert model.predict_deltas(conds[:0]).shape == (0, 4)


def test_checkpoints_load_in_every_form(tmp_path):
    source = tiny_d2mp()
    state = source.state_dict()
    forms = {'runner.pth': {'state_dict': state, 'meta': {'iter': 3}},
             'official.pt': {'ddpm': {f'module.{k}': v for k, v in state.items()}, 'epoch': 800},
             'mot.pth': {'state_dict': {f'tracker.motion.{k}': v for k, v in state.items()}}}
    for name, data in forms.items():
        torch.save(data, tmp_path / name)
        model = D2MP(encoder_dim=ENCODER_DIM, tf_layer=TF_LAYER, checkpoint=str(tmp_path / name))
        assert model.has_weights and torch.equal(model.encoder.cls_token, source.encoder.cls_token), name
    torch.save({'state_dict': {'backbone.conv.weight': torch.zeros(1)}}, tmp_path / 'other.pth')
    with pytest.raises(KeyError, match='not a D2MP checkpoint'):
        D2MP(encoder_dim=ENCODER_DIM, tf_layer=TF_LAYER, checkpoint=str(tmp_path / 'other.pth'))


# ------------------------------------------------------------------------------------------------ training windows
def write_video(root, name, rows, width=100, height=50):
    video = root / name
    (video / 'gt').mkdir(parents=True)
    (video / 'seqinfo.ini').write_text(f'[Sequence]\nname={name}\nimDir=img1\nframeRate=30\nseqLength=20\n'
                                       f'imWidth={width}\nimHeight={height}\nimExt=.jpg\n')
    (video / 'gt' / 'gt.txt').write_text(''.join(','.join(str(v) for v in r) + '\n' for r in rows))


def test_trajectory_windows_on_a_hand_built_ground_truth(tmp_path):
    from mmengine.dataset import default_collate

    from vastmat.datasets import TrajectoryWindowDataset
    # track 7: frames 1-6, 8, 9 (a gap, ignored: windows run over rows), an ignored row at frame 7; written out of
    # order; track 3: six rows, one short of a window
    track7 = [[f, 7, 10 + 2 * f, 5 + f, 20 + f, 10, 1, 1, 1] for f in (1, 2, 3, 4, 5, 6, 8, 9)]
    rows = track7[::-1] + [[7, 7, 0, 0, 50, 50, 0, 1, 1]] + [[f, 3, 1, 1, 4, 4, 1, 1, 1] for f in range(1, 7)]
    write_video(tmp_path, 'v', rows)
    dataset = TrajectoryWindowDataset(str(tmp_path))
    assert len(dataset) == 2  # 8 rows - interval 5 - 1
    conds, targets = dataset.windows(np.arange(2))

    def norm(f):  # cx / W, cy / H, w / W, h / H of track 7 at frame f
        return np.array([(10 + 2 * f + (20 + f) / 2) / 100, (5 + f + 5) / 50, (20 + f) / 100, 10 / 50])

    frames = [1, 2, 3, 4, 5, 6, 8, 9]
    for w in range(2):
        history = [norm(f) for f in frames[w:w + 6]]
        expected = np.array([np.concatenate([history[i], history[i] - history[i - 1]]) for i in range(1, 6)])
        assert np.allclose(conds[w], expected)
        assert np.allclose(targets[w], norm(frames[w + 6]) - norm(frames[w + 5]))
    batch = default_collate([dataset[0], dataset[1]])
    assert batch['inputs'].shape == (2, 5, 8) and batch['data_samples'].shape == (2, 4)
    assert batch['inputs'].dtype == torch.float32 and torch.allclose(batch['inputs'][1].double(),
                                                                     torch.from_numpy(conds[1]), atol=1e-7)
    # stride 2 keeps frames 1, 3, 5, 9 of track 7 and 1, 3, 5 of track 3: no window of 7 rows; with interval 1
    # (windows of 3 rows) 2 + 1
    assert len(TrajectoryWindowDataset(str(tmp_path), stride=2)) == 0
    assert len(TrajectoryWindowDataset(str(tmp_path), stride=2, interval=1)) == 3
    assert len(TrajectoryWindowDataset(str(tmp_path), exclude_videos=['w'], videos=['v'])) == 2
    with pytest.raises(KeyError, match='not under'):
        TrajectoryWindowDataset(str(tmp_path), videos=['missing'])


@pytest.mark.skipif(not osp.isdir(ANIMALTRACK), reason=f'{ANIMALTRACK}: not found (../shared/data beside the clone)')
def test_tiny_d2mp_trains_through_the_runner_and_drives_the_tracker(tmp_path):
    config = osp.join(REPO, 'configs', 'd2mp', 'd2mp_tiny_animaltrack.py')
    tool('tools/train.py', config, '--work-dir', tmp_path, '--cfg-options',
         f'train_dataloader.dataset.data_root={ANIMALTRACK}/')
    path = tmp_path / 'iter_3.pth'
    checkpoint = torch.load(path, weights_only=True)  # plain data
    assert checkpoint['meta']['iter'] == 3 and any(k.startswith('diffusion.net.') for k in checkpoint['state_dict'])
    trained = D2MP(encoder_dim=ENCODER_DIM, tf_layer=TF_LAYER, checkpoint=str(path))
    assert trained.has_weights
    from vastmat.registry import MODELS
    tracker = MODELS.build(dict(type='DiffMOTTracker', motion=dict(type='D2MP', encoder_dim=ENCODER_DIM,
                                                                   tf_layer=TF_LAYER, checkpoint=str(path))))
    tracker.reset()
    for frame in (1, 2, 3):
        out = tracker.update(TrackingFrame.from_arrays([[10, 10, 60, 40], [200, 100, 260, 180]], [0.9, 0.8], frame,
                                                       image_size=(480, 640)))
    assert len(out) == 2  # after 3 iterations the motion is still random: tracks, not their ids


# ------------------------------------------------------------------------------------------------------- tracker
def test_untrained_motion_model_is_refused_with_the_setting_to_give():
    from vastmat.registry import MODELS
    tracker = MODELS.build(dict(type='DiffMOTTracker', motion=dict(type='D2MP', encoder_dim=ENCODER_DIM,
                                                                   tf_layer=TF_LAYER)))
    frame = TrackingFrame.from_arrays([[0, 0, 10, 10]], [0.9], 1, image_size=(100, 100), video_name='v')
    with pytest.raises(MissingTrackerInput, match='model.tracker.motion.checkpoint'):
        tracker.update(frame)
    # weights arriving with a tracking model's state dict count as trained
    tracker.motion.load_state_dict(tiny_d2mp().state_dict())
    assert len(tracker.update(frame)) == 1
    without_size = TrackingFrame.from_arrays([[0, 0, 10, 10]], [0.9], 2)
    with pytest.raises(MissingTrackerInput, match='image_size'):
        tracker.update(without_size)
    # a fallback size for frames that carry none (e.g. frames built from boxes alone)
    sized = MODELS.build(dict(type='DiffMOTTracker', motion=tiny_d2mp(), image_size=(100, 100)))
    assert sized.required_inputs == () and len(sized.update(without_size)) == 0  # frame 2: not yet confirmed


def test_dynamic_appearance_weight_by_hand():
    from vastmat.models.trackers.diffmot_tracker import compute_aw_new_metric
    emb = np.array([[0.9, 0.2], [0.5, 0.4], [-0.1, 0.95]])
    w = compute_aw_new_metric(emb, 2.2, 0.5)
    row = np.array([min(0.7, 0.5), 0.1, min(1.05, 0.5)]) / 2  # top1 - top2 of each row, capped
    col = np.array([0.4, 0.55]) / 2  # of each column: 0.9 - 0.5, 0.95 - 0.4 (uncapped, 0.55 > 0.5 -> 0.5)
    col = np.minimum(col * 2, 0.5) / 2
    assert np.allclose(w, 2.2 + row[:, None] + col[None, :])
    assert np.allclose(compute_aw_new_metric(emb[:1], 2.2, 0.5), 2.2 + 0.25)  # one row: no column term
    assert np.allclose(compute_aw_new_metric(emb[:, :1], 2.2, 1.7), 2.2 + np.array([[0.2]]))  # one column


def test_first_stage_follows_appearance_when_the_frame_has_features():
    """Two tracks whose boxes both overlap both detections (so no direct pairing): IoU alone prefers one
    assignment; the appearance term (w_assoc_emb 2.2 plus the dynamic bonus) reverses it. Matched embeddings move
    by the score-dependent alpha."""
    from vastmat.registry import MODELS
    e = np.eye(4)
    frame2_feats = np.stack([e[0] + 0.3 * e[2], e[1] + 0.3 * e[3]])
    frame2_feats /= np.linalg.norm(frame2_feats, axis=1, keepdims=True)

    def run(with_features):
        tracker = MODELS.build(dict(type='DiffMOTTracker', motion=tiny_d2mp(zero_motion=True)))
        tracker.reset()
        first = [[100, 100, 200, 200], [150, 100, 250, 200]]
        tracker.update(TrackingFrame.from_arrays(first, [0.9, 0.9], 1, image_size=(480, 640),
                                                 features=e[:2] if with_features else None))
        # the detections keep their appearance but each now sits nearer the other track's box (a crossing):
        # IoU(track 1, det 0) = 61/141, IoU(track 1, det 1) = 91/111 (+1 pixel boxes), and symmetrically
        second = [[140, 100, 240, 200], [110, 100, 210, 200]]
        out = tracker.update(TrackingFrame.from_arrays(second, [0.9, 0.7], 2, image_size=(480, 640),
                                                       features=frame2_feats if with_features else None))
        return tracker, {int(i): tuple(b) for i, b in zip(out.ids, out.bboxes)}

    _, by_iou = run(False)
    tracker, by_appearance = run(True)
    assert by_iou == {1: (110.0, 100.0, 210.0, 200.0), 2: (140.0, 100.0, 240.0, 200.0)}
    assert by_appearance == {1: (140.0, 100.0, 240.0, 200.0), 2: (110.0, 100.0, 210.0, 200.0)}
    store = tracker.tracks
    emb = {int(store.ids[row]): store.emb[row] for row in store.tracked}
    for track_id, det, score in ((1, 0, 0.9), (2, 1, 0.7)):
        alpha = 0.95 + 0.05 * (1 - (score - 0.6) / 0.4)  # 0.9625 and 0.9875
        expected = alpha * e[track_id - 1] + (1 - alpha) * frame2_feats[det]
        assert np.allclose(emb[track_id], expected / np.linalg.norm(expected), atol=1e-12)


# --------------------------------------------------------------------------------------- official code's output
@pytest.fixture(scope='module')
def golden_model(tmp_path_factory):
    from vastmat.apis import init_model
    path = tmp_path_factory.mktemp('d2mp') / 'golden_d2mp.pth'
    state = golden_d2mp_state(D2MP(encoder_dim=ENCODER_DIM, tf_layer=TF_LAYER).state_dict())
    torch.save({'state_dict': state}, path)
    return init_model(TINY_CONFIG, cfg_options={'model.tracker.motion.checkpoint': str(path)})


def official(mode, video, tmp_path):
    out = tmp_path / f'official_{mode}_{video}.txt'
    out.write_bytes(gzip.open(osp.join(FIXTURES, mode, f'{video}.txt.gz')).read())
    return read_results(out)


@needs_at10
@pytest.mark.parametrize('mode', ['plain', 'features'])
def test_same_tracks_as_the_official_code(golden_model, mode, tmp_path):
    from vastmat.apis import track_cached, write_results_folder
    dets = osp.join(AT10, 'dets') if mode == 'plain' else write_feature_dets(AT10, str(tmp_path / 'dets'))
    tracks = track_cached(golden_model, osp.join(AT10, 'gt'), dets, list(VIDEOS))
    write_results_folder(tracks, str(tmp_path / 'ours'))
    rows = sum(assert_same_tracks(read_results(tmp_path / 'ours' / f'{v}.txt'), official(mode, v, tmp_path), v)
               for v in VIDEOS)
    assert rows == {'plain': 4998, 'features': 5004}[mode]


@needs_at10
@pytest.mark.parametrize('matcher', ['iou', 'diou', 'cda_fixed', 'cda_adaptive'])
def test_each_matcher_tracks_and_writes_metrics(golden_model, matcher, tmp_path):
    import json

    from mmengine.config import Config

    from vastmat.apis import matcher_fragment, swap_matcher, track_and_score
    from vastmat.registry import MATCHERS
    config = swap_matcher(Config.fromfile(osp.join(REPO, 'configs', 'diffmot', 'diffmot_cached-dets.py')), matcher)
    assert config.model.tracker.matcher == matcher_fragment(matcher)  # the full-size config's matcher
    golden_model.tracker.matcher = MATCHERS.build(matcher_fragment(matcher))
    videos = ['deer_4', 'penguin_4']
    try:
        metrics, _ = track_and_score(golden_model, osp.join(AT10, 'gt'), osp.join(AT10, 'dets'), videos,
                                     str(tmp_path))
    finally:
        golden_model.tracker.matcher = MATCHERS.build(dict(type='IoU', plus_one=True))
    assert json.load(open(tmp_path / 'metrics.json'))['COMBINED']['HOTA'] == metrics['COMBINED']['HOTA']
    assert set(metrics) == {*videos, 'COMBINED'} and all((tmp_path / 'results' / f'{v}.txt').exists() for v in videos)
    # the golden weights move boxes a few pixels at random: a tracker far from zero, below a trained one
    assert 0.3 < metrics['COMBINED']['HOTA'] < 0.9 and metrics['COMBINED']['IDSW'] >= 0


def test_configs_carry_the_official_settings():
    from mmengine.config import Config
    d2mp = Config.fromfile(osp.join(REPO, 'configs', 'd2mp', 'd2mp_1xb2048-800e_vastmat-p1.py'))
    assert d2mp.train_dataloader.batch_size == 2048 and d2mp.train_cfg.max_epochs == 800
    assert d2mp.optim_wrapper.optimizer == dict(type='Adam', lr=1e-4) and d2mp.param_scheduler == []
    assert d2mp.train_dataloader.dataset.protocol == 'protocol1' and d2mp.train_dataloader.dataset.split == 'train'
    assert d2mp.model == dict(type='D2MP', encoder_dim=256, tf_layer=3, eps=0.001) and d2mp.find_unused_parameters
    for name in ('diffmot_cached-dets.py', 'diffmot_yolox-x_vastmat-p1.py', 'diffmot_yolox-x_vastmat-p2.py'):
        tracker = Config.fromfile(osp.join(REPO, 'configs', 'diffmot', name)).model.tracker
        assert (tracker.type, tracker.high_thres, tracker.low_thres, tracker.w_assoc_emb, tracker.aw_param,
                tracker.max_time_lost) == ('DiffMOTTracker', 0.6, 0.4, 2.2, 1.7, 30), name
        assert tracker.matcher == dict(type='IoU', plus_one=True) and tracker.motion.type == 'D2MP', name
    p2 = Config.fromfile(osp.join(REPO, 'configs', 'diffmot', 'diffmot_yolox-x_vastmat-p2.py'))
    assert p2.test_dataloader.dataset.protocol == 'protocol2' and p2.model.detector.type == 'YOLOX'
