"""swap_matcher: one matcher of configs/matchers/ in any tracker's config, the tracker's own keys for it, and the
errors; ``tools/test.py --matcher``.

Before the per-matcher copy configs (``configs/*/*_cached-dets_<matcher>.py``) were deleted, each was checked to
resolve to the same ``model`` as its plain config with the matcher swapped in (14 of 14 equal); the expected dicts
below are what they held.
"""
import os.path as osp

import pytest
from mmengine.config import Config

from helpers.common import REPO
from vastmat.apis import matcher_fragment, parse_matcher_option, swap_matcher
from vastmat.utils.errors import UserInputError

CONFIGS = osp.join(REPO, 'configs')
CDA_ADAPTIVE = dict(type='CDA', mode='forward', k=0.05, n_ref=10, alpha_ref=0.5, alpha_min=0.0, alpha_max=1.0)
MOTION_ADAPTIVE = dict(type='MotionAdaptiveCDA', r_low=0.0, r_high=0.05, crowd_radius=1.0, crowd_full=4.0,
                       n_full=None, a_still=1.0, a_fast=0.25, fallback=CDA_ADAPTIVE)


def plain(tracker):
    return Config.fromfile(osp.join(CONFIGS, tracker, f'{tracker}_cached-dets.py'))


@pytest.mark.parametrize('tracker, name, expected', [
    ('bytetrack', 'diou', dict(type='DIoU')),
    ('bytetrack', 'cda-fixed', dict(type='CDA', mode='fixed', alpha=0.25)),
    ('bytetrack', 'cda_fixed_diou-gate', dict(type='CDA', mode='fixed', alpha=0.25,
                                              gate=dict(type='NormDIoUGate', thr=0.10))),
    ('bytetrack', 'cda-adaptive', CDA_ADAPTIVE),
    ('bytetrack', 'cda-motion-adaptive', MOTION_ADAPTIVE),
    ('tracktrack', 'iou', dict(type='IoU', plus_one=True)),
    # the tracker's own keys for that matcher (matcher_overrides on its class)
    ('tracktrack', 'cda-motion-adaptive', dict(MOTION_ADAPTIVE, r_high=0.005, crowd_full=1.0, a_still=0.25,
                                               a_fast=0.0)),
    ('diffmot', 'cda_motion_adaptive', dict(MOTION_ADAPTIVE, r_low=0.02, r_high=0.6, crowd_radius=2.0,
                                            crowd_full=8.0, a_fast=0.0)),
])
def test_swap_sets_the_whole_matcher_and_nothing_else(tracker, name, expected):
    cfg = plain(tracker)
    swapped = swap_matcher(cfg, name)
    assert swapped.model.tracker.matcher.to_dict() == expected
    del swapped.model.tracker['matcher'], cfg.model.tracker['matcher']
    assert swapped.model.to_dict() == cfg.model.to_dict() and swapped.filename == cfg.filename


def test_original_overrides_and_the_input_left_alone():
    cfg = plain('bytetrack')
    before = cfg.model.to_dict()
    assert swap_matcher(cfg, 'original').model.to_dict() == before == swap_matcher(cfg, None).model.to_dict()
    assert swap_matcher(cfg, 'original', plus_one=False).model.tracker.matcher.to_dict() == dict(type='IoU',
                                                                                                  plus_one=False)
    assert swap_matcher(cfg, 'cda_fixed', alpha=0.5).model.tracker.matcher.alpha == 0.5
    assert cfg.model.to_dict() == before
    assert matcher_fragment('cda-fixed', alpha=0.5) == dict(type='CDA', mode='fixed', alpha=0.5)


def test_errors_name_the_problem():
    with pytest.raises(UserInputError, match=r"matcher 'nope'.*the fragments are cda_adaptive, .*iou"):
        swap_matcher(plain('bytetrack'), 'nope')
    no_matcher = Config(dict(model=dict(type='TrackingByDetection', tracker=dict(type='QDTrackTracker'))))
    with pytest.raises(UserInputError, match='QDTrackTracker takes no matcher'):
        swap_matcher(no_matcher, 'iou')
    assert swap_matcher(no_matcher, 'original').model.to_dict() == no_matcher.model.to_dict()
    with pytest.raises(UserInputError, match='no model.tracker'):
        swap_matcher(Config(dict(model=dict(type='YOLOX'))), 'iou')
    with pytest.raises(UserInputError, match="'NoSuchTracker' is not a registered tracker"):
        swap_matcher(Config(dict(model=dict(tracker=dict(type='NoSuchTracker')))), 'iou')


def test_matcher_option_text():
    assert parse_matcher_option('cda_fixed,alpha=0.25') == ('cda_fixed', dict(alpha=0.25))
    assert parse_matcher_option("cda_motion_adaptive,crowd_full=None,fallback=dict(type='IoU')") == (
        'cda_motion_adaptive', dict(crowd_full=None, fallback=dict(type='IoU')))
    for bad in ('alpha=0.25', 'cda_fixed,alpha', 'cda_fixed,alpha=[1', ''):
        with pytest.raises(UserInputError, match='--matcher'):
            parse_matcher_option(bad)


def test_test_tool_takes_a_matcher(tmp_path, capsys):
    """``tools/test.py --matcher NAME,key=value`` tracks with that matcher; a bad name is one clean error."""
    from helpers.common import SHARED_DATA, tool
    from vastmat.engine.cli import run_cli
    at10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
    if not osp.isdir(at10):
        pytest.skip(f'shared data not found at {at10}')
    args = [osp.join(CONFIGS, 'bytetrack', 'bytetrack_cached-dets.py'), '--det-root', osp.join(at10, 'dets'),
            '--data-root', osp.join(at10, 'gt'), '--cfg-options', 'test_dataloader.dataset.videos=[deer_4]']
    metrics = tool('tools/test.py', *args, '--work-dir', tmp_path / 'a', '--matcher', 'cda_fixed,alpha=0.25')
    assert metrics['vastmat/HOTA'] > 0.3
    module = __import__('helpers.common', fromlist=['_TOOLS'])._TOOLS['tools/test.py']
    with pytest.raises(SystemExit) as exc:
        run_cli(module.main, [*map(str, args), '--work-dir', str(tmp_path / 'b'), '--matcher', 'cda_fixd'])
    assert exc.value.code == 2
    assert "error: matcher 'cda_fixd': no " in capsys.readouterr().err
