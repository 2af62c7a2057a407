"""The global linker from the command lines: tools/test.py --link with the animal counts of an option, a table
file or the split's video list; tools/analysis/link_results.py on a results folder; the oracle association."""
import json
import os.path as osp
import shutil

import numpy as np
import pytest

from helpers.common import REPO, SHARED_DATA, tool

from vastmat.apis import read_track_rows
from vastmat.utils.errors import UserInputError

BYTETRACK = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')


def test_test_py_links_with_the_counts_of_an_option_a_file_and_the_split(demo_root, demo_dets, tmp_path):
    root = str(tmp_path / 'demo')
    shutil.copytree(demo_root, root)
    split = osp.join(root, 'splits', 'protocol1', 'test.txt')
    videos = open(split).read().split()
    common = ('--det-root', demo_dets, '--data-root', root)  # the config's split: protocol1/test
    # one count for every video: at most one identity a video, the rest reported as forced out
    tool('tools/test.py', BYTETRACK, *common, '--work-dir', tmp_path / 'one', '--num-animals', '1')
    reports = {r['video']: r for r in json.load(open(tmp_path / 'one' / 'linking.json'))}
    assert set(reports) == set(videos)
    for video, report in reports.items():
        rows = read_track_rows(osp.join(tmp_path, 'one', 'results', f'{video}.txt'))
        assert len(np.unique(rows[:, 1])) == report['identities'] <= 1
        unlinked = report['forced_out_detections']
        assert report['num_animals'] == 1 and unlinked >= 0
    # the split's video list gives a count for its first video; a table file names a video that is not there
    with open(split, 'w') as f:
        f.write(f'{videos[0]} 2\n' + ''.join(f'{v}\n' for v in videos[1:]))
    tool('tools/test.py', BYTETRACK, *common, '--work-dir', tmp_path / 'split', '--link', 'max_gap=20')
    reports = {r['video']: r for r in json.load(open(tmp_path / 'split' / 'linking.json'))}
    assert reports[videos[0]]['num_animals'] == 2 and reports[videos[1]]['num_animals'] is None
    table = tmp_path / 'counts.csv'
    table.write_text('video,num_animals\nNoSuchVideo,2\n')
    with pytest.raises(KeyError, match=r"counts.csv: animal counts for 1 video\(s\) that are not among"):
        tool('tools/test.py', BYTETRACK, *common, '--work-dir', tmp_path / 'bad', '--num-animals', table)
    for count, message in (('0', '--num-animals: the number of animals must be 1 or more, got 0'),
                           ('2.5', "--num-animals: '2.5' is not a whole number"),
                           ('counts.txt', '--num-animals counts.txt: neither a number nor a file')):
        with pytest.raises(UserInputError, match=message):
            tool('tools/test.py', BYTETRACK, *common, '--work-dir', tmp_path / 'bad', '--num-animals', count)
    # the same linking on the results folder, after the tracker: the same tracks
    out = tool('tools/analysis/link_results.py', tmp_path / 'split' / 'results', tmp_path / 'relinked',
               '--data-root', root, '--videos', *videos, '--link', 'max_gap=20')
    assert out['tracker']['COMBINED']['HOTA'] > 0
    for video in videos[1:]:  # no count: the linker of the folder saw the same tracklets
        again = read_track_rows(osp.join(tmp_path, 'relinked', f'{video}.txt'))
        once = read_track_rows(osp.join(tmp_path, 'split', 'results', f'{video}.txt'))
        assert len(np.unique(again[:, 1])) == len(np.unique(once[:, 1]))


@pytest.mark.skipif(not osp.isdir(AT10), reason=f'{AT10}: not found (../shared/data beside the clone)')
def test_oracle_association_of_the_truth_and_of_simulated_detections(tmp_path):
    videos = ['chicken_3', 'zebra_3']
    gt_root = osp.join(AT10, 'gt')
    # the truth's own boxes as detections: every box keeps its identity, HOTA 1
    dets = tmp_path / 'truth_dets'
    dets.mkdir()
    for video in videos:
        gt = np.loadtxt(osp.join(gt_root, video, 'gt', 'gt.txt'), delimiter=',')
        np.savetxt(dets / f'{video}.txt', np.column_stack([gt[:, :1], -np.ones(len(gt)), gt[:, 2:6],
                                                           np.ones(len(gt)), -np.ones((len(gt), 3))]),
                   delimiter=',', fmt='%.2f')
    perfect = tool('tools/analysis/oracle_association.py', '--data-root', gt_root, '--det-root', dets,
                   '--videos', *videos, '--work-dir', tmp_path / 'perfect')
    assert perfect['COMBINED']['HOTA'] == pytest.approx(1.0) and perfect['COMBINED']['IDSW'] == 0
    # the simulated detections: no identity switch, and an association above the official ByteTrack's on them
    oracle = tool('tools/analysis/oracle_association.py', '--data-root', gt_root, '--det-root',
                  osp.join(AT10, 'dets'), '--videos', *videos, '--work-dir', tmp_path / 'oracle')
    reference = json.load(open(osp.join(AT10, 'reference_metrics_trackeval.json')))
    assert oracle['COMBINED']['IDSW'] == 0
    for video in videos:
        assert oracle[video]['AssA'] > reference['ByteTrack'][video]['AssA']


def test_link_option_adds_the_linker_where_the_model_runs_post_processors():
    """A detector-in-the-loop config without a post_processors key gets the linker; mmdet's QDTrack, which runs
    none, is refused with the way to link its results."""
    import argparse

    from mmengine.config import Config

    from vastmat.engine.linking_options import apply_linking_options
    args = argparse.Namespace(link='max_gap=12', num_animals='3', max_animals=None)
    cfg = Config.fromfile(osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_yolox-debug_vastmat-demo.py'))
    cfg.test_dataloader.dataset.data_root = None  # no videos to check the counts against
    apply_linking_options(cfg, args)
    assert cfg.model.post_processors[-1] == dict(type='GlobalLinker', max_gap=12, num_animals=3)
    qdtrack = Config.fromfile(osp.join(REPO, 'configs', 'qdtrack', 'qdtrack_tiny_vastmat-demo.py'))
    with pytest.raises(UserInputError, match="model.type='QDTrack' runs no post-processors; link its results"):
        apply_linking_options(qdtrack, args)
