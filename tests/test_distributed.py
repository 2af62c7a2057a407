"""tools/dist_train.sh / dist_test.sh with 2 processes on the CPU (gloo)."""
import json
import os
import os.path as osp

import pytest
import torch

from conftest import DEBUG_YOLOX, REPO, data_root_options, free_port, run

pytestmark = pytest.mark.slow


def test_dist_train_two_processes_end_with_identical_weights(demo_root, tmp_path):
    work_dir = tmp_path / 'dist'
    config = tmp_path / 'yolox_debug_save-rank-weights.py'  # every rank saves its parameters after training
    config.write_text(f"_base_ = ['{DEBUG_YOLOX}']\n"
                      "custom_imports = dict(imports=['rank_weights_hook'], allow_failed_imports=False)\n"
                      "custom_hooks = [dict(type='SaveRankWeightsHook')]\n")
    # the hook module by its own name: a package named 'tests' in site-packages (model-index, a dependency of
    # mmpretrain, installs one) would hide this repository's tests/ from 'tests.helpers...'
    helpers = os.pathsep.join([osp.join(REPO, 'tests', 'helpers'), REPO])
    proc = run(['tools/dist_train.sh', str(config), '2', '--work-dir', str(work_dir), '--cfg-options',
                *data_root_options(demo_root)], env={'PORT': str(free_port()), 'PYTHONPATH': helpers})
    # mmengine calls the world size "GPU number", here 2 CPU processes
    assert 'Distributed training: True' in proc.stdout and 'GPU number: 2' in proc.stdout
    rank0 = torch.load(work_dir / 'rank0_of2.pth', weights_only=True)
    rank1 = torch.load(work_dir / 'rank1_of2.pth', weights_only=True)
    assert rank0.keys() == rank1.keys() and len(rank0) > 50
    assert all(torch.equal(rank0[k], rank1[k]) for k in rank0)
    # rank 0's checkpoint holds them
    checkpoint = torch.load(work_dir / 'iter_2.pth', weights_only=True)['state_dict']
    assert all(torch.equal(checkpoint[k], rank0[k]) for k in rank0)

    test_dir = tmp_path / 'dist_test'
    run(['tools/dist_test.sh', DEBUG_YOLOX, '2', '--checkpoint', str(work_dir / 'iter_2.pth'), '--work-dir',
         str(test_dir), '--cfg-options', *data_root_options(demo_root)], env={'PORT': str(free_port())})
    metrics = json.load(open(osp.join(test_dir, 'metrics.json')))
    assert 'coco/bbox_mAP' in metrics
