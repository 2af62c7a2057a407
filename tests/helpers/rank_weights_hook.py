"""Test helper (imported through ``custom_imports``): every rank saves its final parameters to the work dir."""
import os.path as osp

import torch
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from vastmat.registry import HOOKS


@HOOKS.register_module()
class SaveRankWeightsHook(Hook):

    def after_train(self, runner) -> None:
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        params = {name: p.detach().cpu().clone() for name, p in model.named_parameters()}
        torch.save(params, osp.join(runner.work_dir, f'rank{runner.rank}_of{runner.world_size}.pth'))
