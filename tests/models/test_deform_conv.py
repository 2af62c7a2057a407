"""vastmat.models.backbones.deform_conv: the CPU path of DCNv2 gives mmcv's kernel's output and gradients (to float
rounding) for offsets between pixels, on pixels (the zero offsets a training starts from) and outside the input;
the module keeps mmcv's parameters and state dict."""
import pytest
import torch
from mmcv.ops import ModulatedDeformConv2dPack as MMCVPack
from mmcv.ops import modulated_deform_conv2d as mmcv_op

from vastmat.models.backbones.deform_conv import ModulatedDeformConv2dPack, modulated_deform_conv2d


def _inputs(seed: int, offsets: str, n=2, c=5, h=9, w=11, out=4, k=(3, 3), stride=(1, 1), padding=(1, 1),
            dilation=(1, 1)):
    generator = torch.Generator().manual_seed(seed)
    out_h = (h + 2 * padding[0] - dilation[0] * (k[0] - 1) - 1) // stride[0] + 1
    out_w = (w + 2 * padding[1] - dilation[1] * (k[1] - 1) - 1) // stride[1] + 1
    taps = k[0] * k[1]
    offset = {'between': torch.randn(n, 2 * taps, out_h, out_w, generator=generator) * 1.7,
              'on pixels': torch.zeros(n, 2 * taps, out_h, out_w),  # (integer positions: one-sided gradients)
              'outside': torch.randn(n, 2 * taps, out_h, out_w, generator=generator) * 8}[offsets]
    return dict(x=torch.randn(n, c, h, w, generator=generator), offset=offset,
                mask=torch.rand(n, taps, out_h, out_w, generator=generator),
                weight=torch.randn(out, c, *k, generator=generator), bias=torch.randn(out, generator=generator))


def _run(op, tensors: dict, **settings) -> list[torch.Tensor]:
    leaves = {name: t.clone().requires_grad_() for name, t in tensors.items()}
    out = op(leaves['x'], leaves['offset'], leaves['mask'], leaves['weight'], leaves['bias'], **settings)
    (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum().backward()
    return [out.detach()] + [leaves[name].grad for name in ('x', 'offset', 'mask', 'weight', 'bias')]


@pytest.mark.parametrize('offsets', ['between', 'on pixels', 'outside'])
@pytest.mark.parametrize('geometry', [dict(), dict(stride=(2, 2)), dict(dilation=(2, 1), padding=(2, 1)),
                                      dict(k=(1, 3), padding=(0, 1))], ids=['3x3', 'stride2', 'dilation', '1x3'])
def test_output_and_gradients_equal_mmcvs_kernel(offsets, geometry):
    tensors = _inputs(0, offsets, **geometry)
    settings = {key: geometry.get(key, default) for key, default in
                (('stride', (1, 1)), ('padding', (1, 1)), ('dilation', (1, 1)))}
    ours = _run(modulated_deform_conv2d, tensors, **settings)
    mmcv = _run(lambda *a, stride, padding, dilation: mmcv_op(*a, stride, padding, dilation, 1, 1), tensors,
                **settings)
    for name, a, b in zip(('output', 'x', 'offset', 'mask', 'weight', 'bias'), ours, mmcv):
        assert a.shape == b.shape, name
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4, msg=f'{offsets}: {name}')
    assert ours[0].abs().max() > 1 and ours[2].abs().max() > 0.1  # not zeros against zeros


def test_module_is_mmcvs_with_the_same_state_dict_and_output():
    torch.manual_seed(0)
    ours = ModulatedDeformConv2dPack(6, 4, kernel_size=3, padding=1)
    theirs = MMCVPack(6, 4, kernel_size=3, padding=1)
    assert isinstance(ours, MMCVPack) and ours.state_dict().keys() == theirs.state_dict().keys()
    with torch.no_grad():  # offsets and masks that are not the initial zeros
        ours.conv_offset.weight.normal_(0, 0.3)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(2, 6, 10, 12)
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-4, atol=1e-4)
    grouped = ModulatedDeformConv2dPack(6, 4, kernel_size=3, padding=1, deform_groups=2)  # mmcv's kernel
    grouped_mmcv = MMCVPack(6, 4, kernel_size=3, padding=1, deform_groups=2)
    grouped_mmcv.load_state_dict(grouped.state_dict())
    assert torch.equal(grouped(x), grouped_mmcv(x))


def test_wrong_channels_are_named():
    tensors = _inputs(0, 'between')
    with pytest.raises(ValueError, match='weight takes 3 input channels'):
        modulated_deform_conv2d(tensors['x'], tensors['offset'], tensors['mask'], tensors['weight'][:, :3],
                                tensors['bias'], padding=(1, 1))


def test_benchmark_times_both_kernels_on_the_tiny_fairmots_dcns(tmp_path):
    import json

    from helpers.common import tool
    out = tool('tools/benchmark/deform_conv.py', '--repeats', '1', '--batch', '1', '--out', tmp_path / 'dcn.json')
    assert out['dcns'] == 16 and out['size'] == [128, 96]  # the tiny DLA's 16 upsampling DCNs, at its img_scale
    assert out['seconds']['mmcv'] > 0 and out['seconds']['vastmat'] > 0 and out['largest_difference'] < 1e-3
    assert json.load(open(tmp_path / 'dcn.json')) == out
