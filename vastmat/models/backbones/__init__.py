"""Backbones that mmdet lacks: DLA-34 with deformable DLA-up / IDA-up upsampling (FairMOT)."""
from .dla import DLA34_IMAGENET_URL, DLASeg

__all__ = ['DLA34_IMAGENET_URL', 'DLASeg']
