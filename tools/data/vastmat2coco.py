#!/usr/bin/env python
"""Convert a VastMAT root (or MOTChallenge split folder) to COCO-VID JSON for mmdet's own video datasets.

    python tools/data/vastmat2coco.py --data-root DIR [--split protocol1/train] [--stride 3] --out FILE.json

Images are ``videos/<video>/img1/NNNNNN.jpg`` relative to the data root (use ``data_prefix=dict(img_path=ROOT)``);
every animal is category 1 ``animal``; valid=0 rows become ``iscrowd=1`` (ignored); each annotation keeps
``mot_instance_id`` (the gt.txt id), ``vastmat_category``, ``vastmat_group`` and ``visibility``; ``instance_id``
is unique over the file, as mmdet's mot2coco writes it.
"""
import argparse
import os.path as osp

from tqdm import tqdm

from vastmat.datasets.categories import Categories
from vastmat.datasets.sequences import load_sequence, parse_split_name, select_videos, sequence_root
from vastmat.utils.io import write_json_atomic


def convert(data_root: str, names: list[str], stride: int = 1) -> dict:
    categories = Categories.for_root(data_root)
    videos, images, annotations = [], [], []
    instance_ids: dict[tuple[int, int], int] = {}
    base = sequence_root(data_root)
    for video_id, name in enumerate(tqdm(names, desc='converting'), start=1):
        seq = load_sequence(data_root, name, stride=stride)
        videos.append(dict(id=video_id, name=name, fps=seq.frame_rate, width=seq.info.get('imWidth'),
                           height=seq.info.get('imHeight')))
        first_image_id = len(images) + 1
        for frame in range(1, seq.length + 1):
            images.append(dict(id=len(images) + 1, video_id=video_id, frame_id=frame - 1,
                               file_name=osp.relpath(seq.image_path(frame), osp.dirname(base)
                                                     if base != data_root else data_root),
                               width=seq.info.get('imWidth'), height=seq.info.get('imHeight')))
        gt = seq.gt
        if gt is None:
            continue
        for r in range(len(gt)):
            key = (video_id, int(gt.ids[r]))
            instance_ids.setdefault(key, len(instance_ids) + 1)
            left, top, width, height = gt.boxes[r].tolist()
            category = int(gt.categories[r])
            annotations.append(dict(
                id=len(annotations) + 1, image_id=first_image_id + int(gt.frames[r]) - 1, video_id=video_id,
                category_id=1, instance_id=instance_ids[key], mot_instance_id=int(gt.ids[r]),
                bbox=[left, top, width, height], area=width * height, iscrowd=int(gt.valid[r] == 0),
                visibility=float(gt.visibility[r]), vastmat_category=category,
                vastmat_group=categories.group_of(category) if category in categories else None))
    return dict(videos=videos, images=images, annotations=annotations, categories=[dict(id=1, name='animal')])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', required=True)
    parser.add_argument('--split', help='PROTOCOL/SPLIT, e.g. protocol1/train (default: all videos)')
    parser.add_argument('--stride', type=int, default=1)
    parser.add_argument('--out', required=True)
    args = parser.parse_args(argv)
    protocol, split = parse_split_name(args.split)
    coco = convert(args.data_root, select_videos(args.data_root, protocol, split), args.stride)
    write_json_atomic(coco, args.out)
    print(f'{len(coco["videos"])} videos, {len(coco["images"])} images, {len(coco["annotations"])} annotations '
          f'-> {args.out}')


if __name__ == '__main__':
    from vastmat.engine.cli import run_cli
    run_cli(main)
