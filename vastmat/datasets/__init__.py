"""Datasets: gt.txt / det.txt formats, categories, sequences, statistics, the VastMAT dataset, cached detections,
demo data."""
from .aflink_pairs import AFLinkPairs  # noqa: F401  (registers the dataset)
from . import augmentation  # noqa: F401  (registers FairMOT's augmentations, AlignInstanceFields, ClipRandomCrop)
from .frame_sampling import VastMATClipSample, VastMATClipSampler, VastMATRefFrameSample, frame_is_legal
from . import samplers  # noqa: F401  (registers InfiniteTrackImgSampler)
from .reid_crops import VastMATDetectionCrops, VastMATReIDDataset  # noqa: F401  (registers the datasets, transforms)
from .trajectory_windows import TrajectoryWindowDataset  # noqa: F401  (registers the dataset)
from .transforms import (LoadTrackingDetections, LoadVastMATAnnotations, LoadVideoDetections, PackVastMATInputs,
                         PackVideoTrackingInputs)
from .vastmat_dataset import VastMATDataset

__all__ = ['VastMATDataset', 'LoadVastMATAnnotations', 'LoadTrackingDetections', 'LoadVideoDetections',
           'PackVastMATInputs', 'PackVideoTrackingInputs',
           'VastMATClipSample', 'VastMATClipSampler', 'VastMATRefFrameSample', 'frame_is_legal']
