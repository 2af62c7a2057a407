"""DLA-34 with deformable DLA-up / IDA-up upsampling: the network of FairMOT and CenterNet (``DLASeg`` of the
official ``src/lib/models/networks/pose_dla_dcn.py``) without its heads (they are
:class:`~vastmat.models.dense_heads.FairMOTHead`).

Written here because mmdet has no DLA and timm's ``dla34`` lacks the deformable upsampling and the official module
names. The layout and parameter names follow the official file (``base.level3.tree1.conv1.weight``,
``dla_up.ida_0.proj_1.conv.weight``, ``ida_up.up_1.weight`` ...), so an official FairMOT or CenterNet checkpoint
loads; the deformable convolutions are mmcv's DCNv2 (``ModulatedDeformConv2dPack``: same parameters and offset/mask
layout as the official compiled ``DCN``, whose offset conv is named ``conv_offset_mask``, renamed on loading), trained
on the CPU through :mod:`~vastmat.models.backbones.deform_conv` (3 times as fast as mmcv's CPU kernels).
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator, Sequence

import torch
from mmengine.model import BaseModule
from torch import nn

from vastmat.models.backbones.deform_conv import ModulatedDeformConv2dPack
from vastmat.registry import MODELS

# the official BN momentum (PyTorch's default)
BN_MOMENTUM = 0.1
# ImageNet weights of the official DLA-34 (load them with init_cfg=dict(type='Pretrained', checkpoint=...))
DLA34_IMAGENET_URL = 'http://dl.yf.io/dla/models/imagenet/dla34-ba72cf86.pth'


class BasicBlock(nn.Module):
    """Two 3x3 conv-BN layers with a residual (given by the tree, or the input)."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1, dilation: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=dilation, bias=False, dilation=dilation)
        self.bn1 = nn.BatchNorm2d(planes, momentum=BN_MOMENTUM)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=dilation, bias=False, dilation=dilation)
        self.bn2 = nn.BatchNorm2d(planes, momentum=BN_MOMENTUM)
        self.stride = stride

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
        residual = x if residual is None else residual
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + residual)


class Root(nn.Module):
    """Aggregation node: 1x1 conv-BN over the concatenated children (plus the first child when residual)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, residual: bool) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, stride=1, bias=False, padding=(kernel_size - 1) // 2)
        self.bn = nn.BatchNorm2d(out_channels, momentum=BN_MOMENTUM)
        self.relu = nn.ReLU(inplace=True)
        self.residual = residual

    def forward(self, *children: torch.Tensor) -> torch.Tensor:
        x = self.bn(self.conv(torch.cat(children, 1)))
        if self.residual:
            x = x + children[0]
        return self.relu(x)


class Tree(nn.Module):
    """Hierarchical deep aggregation tree of ``levels`` levels (official ``Tree``)."""

    def __init__(self, levels: int, block: type, in_channels: int, out_channels: int, stride: int = 1,
                 level_root: bool = False, root_dim: int = 0, root_kernel_size: int = 1, dilation: int = 1,
                 root_residual: bool = False) -> None:
        super().__init__()
        if root_dim == 0:
            root_dim = 2 * out_channels
        if level_root:
            root_dim += in_channels
        if levels == 1:
            self.tree1 = block(in_channels, out_channels, stride, dilation=dilation)
            self.tree2 = block(out_channels, out_channels, 1, dilation=dilation)
            self.root = Root(root_dim, out_channels, root_kernel_size, root_residual)
        else:
            self.tree1 = Tree(levels - 1, block, in_channels, out_channels, stride, root_dim=0,
                              root_kernel_size=root_kernel_size, dilation=dilation, root_residual=root_residual)
            self.tree2 = Tree(levels - 1, block, out_channels, out_channels, root_dim=root_dim + out_channels,
                              root_kernel_size=root_kernel_size, dilation=dilation, root_residual=root_residual)
        self.level_root = level_root
        self.root_dim = root_dim
        self.levels = levels
        self.downsample = nn.MaxPool2d(stride, stride=stride) if stride > 1 else None
        self.project = None
        if in_channels != out_channels:
            self.project = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride=1, bias=False),
                                         nn.BatchNorm2d(out_channels, momentum=BN_MOMENTUM))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None,
                children: list | None = None) -> torch.Tensor:
        children = [] if children is None else children
        bottom = self.downsample(x) if self.downsample is not None else x
        residual = self.project(bottom) if self.project is not None else bottom
        if self.level_root:
            children.append(bottom)
        x1 = self.tree1(x, residual)
        if self.levels == 1:
            x2 = self.tree2(x1)
            return self.root(x2, x1, *children)
        children.append(x1)
        return self.tree2(x1, children=children)


class DLA(nn.Module):
    """The DLA trunk: ``base_layer`` (7x7 conv, stride 1), ``level0``..``level5`` at strides 1, 2, 4, 8, 16, 32;
    returns the six levels' outputs. DLA-34: levels (1, 1, 1, 2, 2, 1), channels (16, 32, 64, 128, 256, 512)."""

    def __init__(self, levels: Sequence[int], channels: Sequence[int], residual_root: bool = False) -> None:
        super().__init__()
        if len(levels) != 6 or len(channels) != 6:
            raise ValueError(f'DLA: levels and channels need 6 entries each, got {list(levels)} and {list(channels)}')
        self.channels = list(channels)
        self.base_layer = nn.Sequential(
            nn.Conv2d(3, channels[0], kernel_size=7, stride=1, padding=3, bias=False),
            nn.BatchNorm2d(channels[0], momentum=BN_MOMENTUM), nn.ReLU(inplace=True))
        self.level0 = self._make_conv_level(channels[0], channels[0], levels[0])
        self.level1 = self._make_conv_level(channels[0], channels[1], levels[1], stride=2)
        self.level2 = Tree(levels[2], BasicBlock, channels[1], channels[2], 2, level_root=False,
                           root_residual=residual_root)
        self.level3 = Tree(levels[3], BasicBlock, channels[2], channels[3], 2, level_root=True,
                           root_residual=residual_root)
        self.level4 = Tree(levels[4], BasicBlock, channels[3], channels[4], 2, level_root=True,
                           root_residual=residual_root)
        self.level5 = Tree(levels[5], BasicBlock, channels[4], channels[5], 2, level_root=True,
                           root_residual=residual_root)

    @staticmethod
    def _make_conv_level(inplanes: int, planes: int, convs: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
        modules: list[nn.Module] = []
        for i in range(convs):
            modules += [nn.Conv2d(inplanes, planes, 3, stride=stride if i == 0 else 1, padding=dilation, bias=False,
                                  dilation=dilation),
                        nn.BatchNorm2d(planes, momentum=BN_MOMENTUM), nn.ReLU(inplace=True)]
            inplanes = planes
        return nn.Sequential(*modules)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        outputs = []
        x = self.base_layer(x)
        for i in range(6):
            x = getattr(self, f'level{i}')(x)
            outputs.append(x)
        return outputs


def fill_up_weights(up: nn.ConvTranspose2d) -> None:
    """Bilinear-interpolation init of a depthwise transposed conv (the official ``fill_up_weights``)."""
    w = up.weight.data
    f = math.ceil(w.size(2) / 2)
    c = (2 * f - 1 - f % 2) / (2. * f)
    for i in range(w.size(2)):
        for j in range(w.size(3)):
            w[0, 0, i, j] = (1 - math.fabs(i / f - c)) * (1 - math.fabs(j / f - c))
    for ch in range(1, w.size(0)):
        w[ch, 0, :, :] = w[0, 0, :, :]


class DeformConv(nn.Module):
    """3x3 DCNv2 (mmcv's ``ModulatedDeformConv2dPack``, with bias; its CPU training path ours) followed by BN and
    ReLU (``actf``); with ``deformable=False`` a plain 3x3 convolution with bias instead of the DCN."""

    def __init__(self, chi: int, cho: int, deformable: bool = True) -> None:
        super().__init__()
        self.actf = nn.Sequential(nn.BatchNorm2d(cho, momentum=BN_MOMENTUM), nn.ReLU(inplace=True))
        self.conv = (ModulatedDeformConv2dPack(chi, cho, kernel_size=3, stride=1, padding=1, dilation=1,
                                               deform_groups=1) if deformable
                     else nn.Conv2d(chi, cho, kernel_size=3, stride=1, padding=1, bias=True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.actf(self.conv(x))


class IDAUp(nn.Module):
    """Iterative deep aggregation: levels ``startp + 1 .. endp - 1`` are projected to ``o`` channels, upsampled by
    ``up_f`` (bilinear-initialised transposed conv) and merged into the previous level (in place, as official)."""

    def __init__(self, o: int, channels: Sequence[int], up_f: Sequence[int], deformable: bool = True) -> None:
        super().__init__()
        for i in range(1, len(channels)):
            f = int(up_f[i])
            up = nn.ConvTranspose2d(o, o, f * 2, stride=f, padding=f // 2, output_padding=0, groups=o, bias=False)
            fill_up_weights(up)
            setattr(self, f'proj_{i}', DeformConv(channels[i], o, deformable))
            setattr(self, f'up_{i}', up)
            setattr(self, f'node_{i}', DeformConv(o, o, deformable))

    def forward(self, layers: list[torch.Tensor], startp: int, endp: int) -> None:
        for i in range(startp + 1, endp):
            upsample = getattr(self, f'up_{i - startp}')
            project = getattr(self, f'proj_{i - startp}')
            layers[i] = upsample(project(layers[i]))
            node = getattr(self, f'node_{i - startp}')
            layers[i] = node(layers[i] + layers[i - 1])


class DLAUp(nn.Module):
    """Deep layer aggregation upsampling from the coarsest level down to level ``startp`` (``ida_0``, ``ida_1``...);
    returns the aggregated maps, finest first."""

    def __init__(self, startp: int, channels: Sequence[int], scales: Sequence[int],
                 in_channels: Sequence[int] | None = None, deformable: bool = True) -> None:
        super().__init__()
        self.startp = startp
        in_channels = list(channels) if in_channels is None else list(in_channels)
        self.channels = list(channels)
        channels = list(channels)
        scales = [int(s) for s in scales]
        for i in range(len(channels) - 1):
            j = -i - 2
            setattr(self, f'ida_{i}', IDAUp(channels[j], in_channels[j:], [s // scales[j] for s in scales[j:]],
                                            deformable))
            scales[j + 1:] = [scales[j]] * len(scales[j + 1:])
            in_channels[j + 1:] = [channels[j]] * len(channels[j + 1:])

    def forward(self, layers: list[torch.Tensor]) -> list[torch.Tensor]:
        out = [layers[-1]]
        for i in range(len(layers) - self.startp - 1):
            getattr(self, f'ida_{i}')(layers, len(layers) - i - 2, len(layers))
            out.insert(0, layers[-1])
        return out


def data_parallel_chunk_sizes(batch: int, chunks: int) -> list[int]:
    """The per-GPU chunk sizes of the official FairMOT / CenterNet ``opts.py`` for ``batch`` images on ``chunks``
    GPUs (``master_batch_size = batch // chunks``, the rest spread evenly, the first GPUs one more), empty chunks
    left out: 12 on 2 GPUs -> ``[6, 6]``."""
    if chunks < 1:
        raise ValueError(f'data_parallel_chunk_sizes: chunks must be >= 1, got {chunks}')
    if chunks == 1:
        return [batch]
    master = batch // chunks
    rest = batch - master
    sizes = [master] + [rest // (chunks - 1) + (1 if i < rest % (chunks - 1) else 0) for i in range(chunks - 1)]
    return [size for size in sizes if size > 0]


@contextlib.contextmanager
def buffer_updates_dropped(module: nn.Module) -> Iterator[None]:
    """Within the block, ``module``'s buffers (BatchNorm running statistics) are updated on copies that are then
    dropped, as those of an ``nn.DataParallel`` replica other than device 0's. The original tensors are swapped back,
    not written, so that autograd's saved tensors stay valid."""
    kept = {}
    for sub in module.modules():
        kept[sub] = dict(sub._buffers)
        sub._buffers.update({k: v.clone() for k, v in sub._buffers.items() if v is not None})
    try:
        yield
    finally:
        for sub, buffers in kept.items():
            sub._buffers.update(buffers)


@MODELS.register_module()
class DLASeg(BaseModule):
    """FairMOT's DLA-34 network without heads: ``base`` (DLA), ``dla_up`` (DLAUp) and ``ida_up`` (IDAUp), all
    upsampling convolutions deformable (DCNv2). Returns a one-element tuple: the ``channels[log2(down_ratio)]``-channel
    map at stride ``down_ratio`` (64 channels at stride 4 for DLA-34), the input of the heads.

    Args:
        levels: blocks per level of the trunk (DLA-34: ``(1, 1, 1, 2, 2, 1)``).
        channels: channels per level (DLA-34: ``(16, 32, 64, 128, 256, 512)``); a tiny config shrinks them.
        down_ratio: output stride, 2, 4, 8 or 16 (FairMOT: 4).
        last_level: the last level merged by ``ida_up`` (official 5).
        out_channel: channels of ``ida_up`` (0: ``channels[log2(down_ratio)]``, the official setting).
        residual_root: residual aggregation nodes (False in DLA-34).
        deformable: DCNv2 upsampling convolutions (official); False: plain 3x3 convolutions (the zoo's tiny FairMOT,
            chosen when mmcv's CPU DCN backward took 3.8 of the 4.4 s of its iterations).
        batch_chunks: in training, run the network on this many chunks of the batch (sizes as the official
            ``opts.py`` splits a batch over GPUs: :func:`data_parallel_chunk_sizes`), as the official
            ``nn.DataParallel`` over that many GPUs does: BatchNorm statistics per chunk, running statistics from the
            first chunk only (device 0's replica). 1: one batch. Inference always runs the whole batch.
        init_cfg: e.g. ``dict(type='Pretrained', checkpoint=DLA34_IMAGENET_URL)`` for the official ImageNet
            weights of the trunk (a plain DLA checkpoint, keys ``base_layer.*``, ``level0.*`` ... ``fc.*``, loads
            into ``base``; its classifier ``fc`` is dropped), or a FairMOT / CenterNet checkpoint of this network.

    Checkpoints with the official names load as they are: the compiled DCN's ``conv_offset_mask`` is mmcv's
    ``conv_offset`` (same shape, same ``o1, o2, mask`` channel order), and ``base.fc.*`` (the ImageNet classifier the
    official code attaches when it loads ImageNet weights, unused by the network) is dropped.
    """

    def __init__(self, levels: Sequence[int] = (1, 1, 1, 2, 2, 1),
                 channels: Sequence[int] = (16, 32, 64, 128, 256, 512), down_ratio: int = 4, last_level: int = 5,
                 out_channel: int = 0, residual_root: bool = False, deformable: bool = True, batch_chunks: int = 1,
                 init_cfg: dict | list | None = None) -> None:
        super().__init__(init_cfg)
        if batch_chunks < 1:
            raise ValueError(f'DLASeg: batch_chunks must be >= 1, got {batch_chunks}')
        self.batch_chunks = batch_chunks
        if down_ratio not in (2, 4, 8, 16):
            raise ValueError(f'DLASeg: down_ratio must be 2, 4, 8 or 16, got {down_ratio}')
        self.first_level = int(math.log2(down_ratio))
        self.last_level = last_level
        if not self.first_level < last_level <= 6:
            raise ValueError(f'DLASeg: last_level must be in ({self.first_level}, 6], got {last_level}')
        self.down_ratio = down_ratio
        self.base = DLA(levels, channels, residual_root=residual_root)
        channels = self.base.channels
        scales = [2 ** i for i in range(len(channels[self.first_level:]))]
        self.dla_up = DLAUp(self.first_level, channels[self.first_level:], scales, deformable=deformable)
        out_channel = out_channel or channels[self.first_level]
        self.out_channels = out_channel
        self.ida_up = IDAUp(out_channel, channels[self.first_level:last_level],
                            [2 ** i for i in range(last_level - self.first_level)], deformable)
        self._register_load_state_dict_pre_hook(self._official_keys)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor]:
        size_divisor = 2 ** (len(self.base.channels) - 1)
        if x.shape[-2] % size_divisor or x.shape[-1] % size_divisor:
            raise ValueError(f'DLASeg: input height and width must be multiples of {size_divisor}, got '
                             f'{tuple(x.shape[-2:])} (pad them: data_preprocessor pad_size_divisor={size_divisor})')
        if self.batch_chunks == 1 or not self.training:
            return (self._forward(x), )
        outs = []
        for i, part in enumerate(x.split(data_parallel_chunk_sizes(len(x), self.batch_chunks))):
            with buffer_updates_dropped(self) if i else contextlib.nullcontext():
                outs.append(self._forward(part))
        return (torch.cat(outs), )

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.dla_up(self.base(x))
        y = [x[i].clone() for i in range(self.last_level - self.first_level)]
        self.ida_up(y, 0, len(y))
        return y[-1]

    @staticmethod
    def _official_keys(state_dict: dict, prefix: str, *args: Any) -> None:
        """Rename the official names in ``state_dict`` (in place) to this module's: see the class docstring."""
        keys = [k for k in state_dict if k.startswith(prefix)]
        names = [k[len(prefix):] for k in keys]
        plain_dla = (any(n.startswith('base_layer.') for n in names)
                     and not any(n.startswith(('base.', 'dla_up.', 'ida_up.')) for n in names))
        for key, name in zip(keys, names):
            if plain_dla:  # an ImageNet DLA checkpoint: the trunk alone
                name = f'base.{name}'
            new = name.replace('.conv_offset_mask.', '.conv_offset.')
            value = state_dict.pop(key)
            if not new.startswith('base.fc.'):
                state_dict[prefix + new] = value
