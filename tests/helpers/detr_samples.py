"""Hand-built frame and clip data samples for the DETR-based video models' tests (TransTrack, MOTIP)."""
import torch


def frame_sample(frame_id, h, w, boxes=((10., 12., 40., 50.),), ids=None, video='v'):
    """One frame's ``DetDataSample``: an ``h x w`` network input of a ``2h x 2w`` original frame, ground-truth boxes
    (pixels of the input) with identity numbers (default 0, 1, ...)."""
    from mmdet.structures import DetDataSample
    from mmengine.structures import InstanceData
    sample = DetDataSample(metainfo=dict(img_shape=(h, w), ori_shape=(2 * h, 2 * w), scale_factor=(0.5, 0.5),
                                         batch_input_shape=(h, w), pad_shape=(h, w), frame_id=frame_id,
                                         video_name=video, video_length=10, frame_rate=10))
    sample.gt_instances = InstanceData(bboxes=torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4),
                                       labels=torch.zeros(len(boxes), dtype=torch.long),
                                       instances_ids=torch.tensor(ids if ids is not None else range(len(boxes))))
    return sample


def clip(frames, key=0):
    """A training clip of ``frames`` with frame ``key`` as its key frame, the others as references."""
    from vastmat.datasets.transforms import VastMATTrackDataSample
    sample = VastMATTrackDataSample(metainfo=dict(key_frames_inds=[key],
                                                  ref_frames_inds=[i for i in range(len(frames)) if i != key]))
    sample.video_data_samples = frames
    return sample
