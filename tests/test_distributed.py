"""tools/dist_train.sh / dist_test.sh with 2 processes on the CPU (gloo)."""
import json
import os.path as osp

import pytest
import torch

from conftest import DEBUG_YOLOX, data_root_options, free_port, run

pytestmark = pytest.mark.slow


def test_dist_train_two_processes_end_with_identical_weights(demo_root, tmp_path):
    work_dir = tmp_path / 'dist'
    proc = run(['tools/dist_train.sh', DEBUG_YOLOX, '2', '--work-dir', str(work_dir), '--cfg-options',
                *data_root_options(demo_root), "custom_imports.imports=[tests.helpers.rank_weights_hook]",
                'custom_imports.allow_failed_imports=False', 'custom_hooks=[dict(type=SaveRankWeightsHook)]'],
               env={'PORT': str(free_port())})
    assert 'Distributed launcher: pytorch' in proc.stdout or 'launcher: pytorch' in proc.stdout
    rank0 = torch.load(work_dir / 'rank0_of2.pth', weights_only=True)
    rank1 = torch.load(work_dir / 'rank1_of2.pth', weights_only=True)
    assert rank0.keys() == rank1.keys() and len(rank0) > 50
    assert all(torch.equal(rank0[k], rank1[k]) for k in rank0)
    # Training changed the weights, and rank 0's checkpoint holds them.
    checkpoint = torch.load(work_dir / 'iter_2.pth', weights_only=True)['state_dict']
    assert all(torch.equal(checkpoint[k], rank0[k]) for k in rank0)

    test_dir = tmp_path / 'dist_test'
    run(['tools/dist_test.sh', DEBUG_YOLOX, '2', '--checkpoint', str(work_dir / 'iter_2.pth'), '--work-dir',
         str(test_dir), '--cfg-options', *data_root_options(demo_root)], env={'PORT': str(free_port())})
    metrics = json.load(open(osp.join(test_dir, 'metrics.json')))
    assert 'coco/bbox_mAP' in metrics
