"""Loading and packing the VastMAT-specific instance fields (category and animal group)."""
from __future__ import annotations

import numpy as np
from mmdet.datasets.transforms import LoadTrackAnnotations, PackTrackInputs

from vastmat.registry import TRANSFORMS


@TRANSFORMS.register_module()
class LoadVastMATAnnotations(LoadTrackAnnotations):
    """mmdet's ``LoadTrackAnnotations`` plus ``gt_categories`` (1..337, -1 unknown) and ``gt_groups`` (index into
    ``GROUPS``, -1 unknown). Use in test pipelines: the geometric training augmentations of mmdet do not carry
    extra per-instance keys."""

    def transform(self, results: dict) -> dict:
        results = super().transform(results)
        instances = results['instances']
        results['gt_categories'] = np.array([i.get('category_id', -1) for i in instances], dtype=np.int64)
        results['gt_groups'] = np.array([i.get('group', -1) for i in instances], dtype=np.int64)
        return results


@TRANSFORMS.register_module()
class PackVastMATInputs(PackTrackInputs):
    """mmdet's ``PackTrackInputs`` that also packs ``gt_categories`` / ``gt_groups`` into
    ``gt_instances.categories`` / ``gt_instances.groups`` (and the ignored instances')."""

    mapping_table = dict(PackTrackInputs.mapping_table, gt_categories='categories', gt_groups='groups')
