"""DCNv2 (modulated deformable convolution) whose CPU path is written with torch's own operators.

:class:`ModulatedDeformConv2dPack` is mmcv's module of that name (the same parameters, offset and mask layout, state
dict and CUDA kernel); where a backward pass follows on the CPU its forward is :func:`modulated_deform_conv2d`: the
input is sampled bilinearly at every tap's deformed positions (four gathers), weighted by the mask, and contracted
with the weight; autograd gives the backward. Written here because mmcv's and torchvision's CPU kernels compute the
backward pass element by element in one thread: a training step's DCNs took 3.3 times as long with mmcv's at the
tiny FairMOT's sizes, and 3.1 times at the full-size FairMOT's at 544x320 (``tools/benchmark/deform_conv.py``, one
thread), for the same values and gradients to float rounding (tests/models/test_deform_conv.py).
"""
from __future__ import annotations

import torch
from mmcv.ops import ModulatedDeformConv2dPack as MMCVModulatedDeformConv2dPack


def modulated_deform_conv2d(x: torch.Tensor, offset: torch.Tensor, mask: torch.Tensor, weight: torch.Tensor,
                            bias: torch.Tensor | None, stride: tuple[int, int] = (1, 1),
                            padding: tuple[int, int] = (0, 0), dilation: tuple[int, int] = (1, 1)) -> torch.Tensor:
    """mmcv's ``modulated_deform_conv2d`` with one group and one deformable group: ``offset`` (N, 2K, Ho, Wo) holds
    (dy, dx) of each of the K = kh * kw taps in row-major order, ``mask`` (N, K, Ho, Wo) their weights; a position
    outside the input samples zeros (bilinear between the pixels inside and zeros outside; nothing, and no gradient,
    at -1 or beyond, as mmcv's)."""
    n, channels, height, width = x.shape
    out_channels, in_channels, kh, kw = weight.shape
    if in_channels != channels:
        raise ValueError(f'weight takes {in_channels} input channels (groups=1), the input has {channels}')
    out_h = (height + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (width + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    taps = kh * kw
    tap_rows = (torch.arange(taps, device=x.device) // kw * dilation[0]).view(1, -1, 1, 1)
    tap_cols = (torch.arange(taps, device=x.device) % kw * dilation[1]).view(1, -1, 1, 1)
    rows = (torch.arange(out_h, device=x.device) * stride[0] - padding[0]).view(1, 1, -1, 1)
    cols = (torch.arange(out_w, device=x.device) * stride[1] - padding[1]).view(1, 1, 1, -1)
    y = (rows + tap_rows).to(x.dtype) + offset[:, 0::2]  # (N, K, Ho, Wo): where each tap samples
    x_pos = (cols + tap_cols).to(x.dtype) + offset[:, 1::2]
    # mmcv's bilinear sampling, with floor and fractions in pixel units (grid_sample's normalised coordinates round a
    # pixel's position to just below it at times, and then its gradient is the difference to the pixel before, where
    # mmcv's is the one to the pixel after: a zero offset, where every training starts, samples on pixels)
    inside = ((y > -1) & (y < height) & (x_pos > -1) & (x_pos < width)).to(x.dtype)  # else nothing, no gradient
    y_low, x_low = torch.floor(y).detach(), torch.floor(x_pos).detach()
    dy, dx = y - y_low, x_pos - x_low
    y_low, x_low = y_low.long(), x_low.long()
    flat = x.reshape(n, channels, height * width)
    sampled = 0
    for y_corner, y_weight in ((y_low, 1 - dy), (y_low + 1, dy)):
        for x_corner, x_weight in ((x_low, 1 - dx), (x_low + 1, dx)):
            valid = (y_corner >= 0) & (y_corner < height) & (x_corner >= 0) & (x_corner < width)
            index = (y_corner.clamp(0, height - 1) * width + x_corner.clamp(0, width - 1)).view(n, 1, -1)
            values = flat.gather(2, index.expand(n, channels, index.shape[-1])).view(n, channels, *y.shape[1:])
            sampled = sampled + values * (y_weight * x_weight * valid).unsqueeze(1)
    columns = sampled * (mask * inside).unsqueeze(1)  # (N, C, K, Ho, Wo)
    out = torch.einsum('nckhw,ock->nohw', columns, weight.reshape(out_channels, channels, kh * kw))
    return out if bias is None else out + bias.view(1, -1, 1, 1)


class ModulatedDeformConv2dPack(MMCVModulatedDeformConv2dPack):
    """mmcv's DCNv2 module (its offset and mask from ``conv_offset``), with :func:`modulated_deform_conv2d` where a
    backward pass follows on the CPU; mmcv's kernel on CUDA, without gradients (its CPU forward is the faster one on
    large inputs) and with several groups or deformable groups."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        backward = torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad)
        if x.device.type == 'cuda' or not backward or self.groups != 1 or self.deform_groups != 1:
            return super().forward(x)
        o1, o2, mask = torch.chunk(self.conv_offset(x), 3, dim=1)
        return modulated_deform_conv2d(x, torch.cat((o1, o2), dim=1), torch.sigmoid(mask), self.weight, self.bias,
                                       self.stride, self.padding, self.dilation)
