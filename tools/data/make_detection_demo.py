#!/usr/bin/env python
"""Render a small detection set of animal-like shapes (COCO format, one class `animal`).

    python tools/data/make_detection_demo.py --out data/demo_det [--train 16] [--val 8] [--seed 0]

writes OUT/images/{train,val}/*.jpg and OUT/annotations/{train,val}.json.
"""
import argparse

from vastmat.datasets.synthetic import make_detection_set


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', default='data/demo_det')
    parser.add_argument('--train', type=int, default=16, help='number of training images')
    parser.add_argument('--val', type=int, default=8, help='number of validation images')
    parser.add_argument('--height', type=int, default=128)
    parser.add_argument('--width', type=int, default=160)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    for split, count, seed in (('train', args.train, args.seed), ('val', args.val, args.seed + 1)):
        path = make_detection_set(args.out, split, count, args.height, args.width, seed=seed)
        print(f'{split}: {count} images -> {path}')


if __name__ == '__main__':
    main()
