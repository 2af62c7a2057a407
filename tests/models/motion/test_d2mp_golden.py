"""D2MP training against the official DiffMOT code, one batch (issue 39): the loss, the gradient of every parameter
and the parameters after one step of the config's optimizer (built by mmengine) equal the official ones
(tests/fixtures/d2mp_train_official: how they were made). The loss against its formula is in
tests/models/trackers/test_diffmot.py.

Three cases, all in training mode (dropout on, as in the official training loop) unless said:
* ``given``: ``loss_from(conditions, deltas, t=..., noise=...)`` with the helper's ``t`` and noise (the official
  ``torch.rand`` / ``torch.randn_like`` returned them), dropout masks from ``torch.manual_seed(DROPOUT_SEED)``;
* ``eval``: the same in eval mode (no dropout): loss and net output, which do not depend on torch's dropout stream;
* ``drawn``: the runner's path, ``model.train_step`` with the optimizer wrapper, after
  ``torch.manual_seed(DRAWN_SEED)``; the port draws dropout masks, ``t`` and noise in the official order.

Both sides run in float64 (the model ``.double()``'d after loading the weights, float64 inputs), so that the
comparison does not depend on the float32 kernels torch/oneDNN/MKL pick for the CPU: Adam's first step is
``lr g / (|g| + eps)``, and float32 rounding of gradients near ``eps`` would decide some steps. The batch is the
fixture's (the helper's, stored: torch's float32 normal draws depend on ``ATEN_CPU_CAPABILITY``). ``t`` and the noise
are float64 on both sides: in ``given`` and ``eval`` the helper's ``u`` and noise; in ``drawn`` both codes draw them
from torch's global generator, ``torch.rand(B)`` in float32 (returned in float64, :func:`rand_in_float64`, as the
fixture's driver does to the official call) and ``torch.randn_like(x_0)`` in float64.
"""
import ast
import contextlib
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper

from helpers.common import REPO, npz_arrays
from helpers.d2mp_train_inputs import (DRAWN_SEED, DROPOUT_SEED, ENCODER_DIM, EPS, TF_LAYER, d2mp_train_batch,
                                       d2mp_train_state)

from vastmat.registry import MODELS

FIXTURE = osp.join(REPO, 'tests', 'fixtures', 'd2mp_train_official', 'train_step.npz')
CONFIG = osp.join(REPO, 'configs', 'd2mp', 'd2mp_1xb2048-800e_vastmat-p1.py')
DTYPE = torch.float64
# float64, the same operations on both sides: the differences are float64 roundings (measured, fixture README:
# up to 1.5e-15 of the loss, 2.9e-15 in the net output, 1.1e-15 in a gradient)
RTOL, ATOL = 1e-12, 1e-13
# Adam's step (below): up to STEP_ATOL (1e-10 of the learning rate) + sensitivity x GRAD_NOISE (a gradient's error)
STEP_ATOL, GRAD_NOISE = 1e-14, 1e-13


@pytest.fixture(scope='module')
def golden():
    return npz_arrays(FIXTURE)


def section(golden, prefix):
    return {key[len(prefix):]: torch.from_numpy(value) for key, value in golden.items() if key.startswith(prefix)}


def build():
    """Our D2MP from the training config (narrowed as the official run: ENCODER_DIM, TF_LAYER) with the golden
    weights, and the config's optimizer wrapper built by mmengine."""
    cfg = Config.fromfile(CONFIG)
    cfg.model.update(encoder_dim=ENCODER_DIM, tf_layer=TF_LAYER)
    model = MODELS.build(cfg.model)
    model.load_state_dict(d2mp_train_state(model.state_dict()), strict=True)
    model.to(DTYPE)  # as the official model in the fixture's driver
    return model, build_optim_wrapper(model, cfg.optim_wrapper)


def float64_batch(golden):
    """The official run's float64 batch (the fixture's): conditions, deltas, ``t`` as the official expression
    computes it from what the (patched) official ``torch.rand`` returned, and the noise. The helper still makes
    them, up to the last bit of its float32 normal draws."""
    official = dict(conditions=golden['batch/condition'], deltas=golden['batch/delta_bbox'],
                    u=golden['given/rand'], noise=golden['given/randn_like'])
    official = {key: torch.from_numpy(value) for key, value in official.items()}
    data = d2mp_train_batch()
    for key, value in official.items():
        assert value.dtype == DTYPE
        close(data[key].to(DTYPE), value, f'the helper\'s {key}', rtol=1e-6, atol=1e-7)
    return dict(conditions=official['conditions'], deltas=official['deltas'], t=official['u'] * (1. - EPS) + EPS,
                noise=official['noise'])


@contextlib.contextmanager
def rand_in_float64(record):
    """``torch.rand`` draws as called (the default dtype, float32, from torch's global generator; the official
    ``torch.rand(B)``) and returns the values in float64; ``torch.randn_like`` draws as called. Each value is
    appended to ``record``. The fixture's driver does the same to the official code."""
    rand, randn_like = torch.rand, torch.randn_like

    def draw_rand(*args, **kwargs):
        assert 'dtype' not in kwargs  # drawn in the default dtype (float32), as the official torch.rand(B)
        out = rand(*args, **kwargs).to(DTYPE)
        record.append(('rand', out))
        return out

    def draw_randn_like(x, *args, **kwargs):
        out = randn_like(x, *args, **kwargs)
        assert out.dtype == DTYPE  # as the official torch.randn_like(x_0), x_0 float64
        record.append(('randn_like', out))
        return out

    torch.rand, torch.randn_like = draw_rand, draw_randn_like
    try:
        yield
    finally:
        torch.rand, torch.randn_like = rand, randn_like


def close(actual, expected, what, rtol=RTOL, atol=ATOL):
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, msg=lambda m: f'{what}: {m}')


def assert_step(model, optim_wrapper, before, golden, case):
    """Parameters after the step equal the official ones (before + the official change), and so does the change
    itself. Adam's first step is ``s = -lr g / (|g| + eps)``: a gradient error ``dg`` (float64 roundings; the two
    codes sum in different orders) moves it by ``|ds/dg| dg = (lr - |s|)^2 / (lr eps) dg``, up to ``lr / eps dg``
    (1e4 dg) where ``g`` is near 0, as for the attention's key biases (gradient 0 up to roundings). So the bound
    per element is STEP_ATOL + that sensitivity (from the official step) times GRAD_NOISE, plus two float64
    roundings of the parameter: up to 1e-9 where ``g`` is near 0, 1e-14 where ``|s|`` is near ``lr``, so that a
    learning rate off by 1e-9 would show. Parameters without a gradient stay bitwise unchanged on both sides."""
    group = optim_wrapper.optimizer.param_groups[0]
    lr, eps = group['lr'], group['eps']
    step = section(golden, f'{case}/step/')
    params = dict(model.named_parameters())
    assert set(step) == set(params)
    for name, p in params.items():
        close(p.detach(), before[name] + step[name], f'{case}: {name} after one step', atol=lr / eps * GRAD_NOISE)
        error = (p.detach() - before[name] - step[name]).abs()
        sensitivity = (lr - step[name].abs()).clamp_min(0) ** 2 / (lr * eps)
        bound = STEP_ATOL + sensitivity * GRAD_NOISE + 2 * torch.finfo(DTYPE).eps * before[name].abs()
        assert (error <= bound).all(), f'{case}: {name} step differs by up to {error.max().item():.3g}'
        if not step[name].any():
            assert torch.equal(p.detach(), before[name]), name


def test_optimizer_is_the_official_one(golden):
    model, optim_wrapper = build()
    official = dict(ast.literal_eval(str(golden['optimizer'])))
    official.pop('initial_lr')  # set by the official (never stepped) ExponentialLR; our param_scheduler is empty
    groups = optim_wrapper.optimizer.param_groups
    assert type(optim_wrapper.optimizer) is torch.optim.Adam and len(groups) == 1
    assert {k: v for k, v in groups[0].items() if k != 'params'} == official
    assert [id(p) for p in groups[0]['params']] == [id(p) for p in model.parameters()]  # all, as the official
    assert not optim_wrapper.clip_grad_kwargs and optim_wrapper._accumulative_counts == 1  # no clipping


def test_loss_gradients_and_step_with_given_t_and_noise(golden):
    model, optim_wrapper = build()
    data = float64_batch(golden)
    model.train()
    net_out = []
    model.diffusion.net.register_forward_hook(lambda m, i, o: net_out.append(o.detach().clone()))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    torch.manual_seed(DROPOUT_SEED)
    loss = model.loss_from(data['conditions'], data['deltas'], t=data['t'], noise=data['noise'])
    close(net_out[0], torch.from_numpy(golden['given/c_pred']), 'net output C_hat')
    close(loss.detach(), torch.from_numpy(golden['given/loss']), 'loss')

    optim_wrapper.backward(loss)
    grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    official = section(golden, 'given/grad/')
    assert sorted(grads) == sorted(official)  # the same parameters have a gradient ...
    assert sorted(n for n, p in model.named_parameters() if p.grad is None) == list(golden['given/no_grad'])
    assert len(official) == 129 and len(golden['given/no_grad']) == 24  # ... all but the templates layer, layer2
    for name, grad in grads.items():
        close(grad, official[name], f'gradient of {name}')

    optim_wrapper.step()
    assert_step(model, optim_wrapper, before, golden, 'given')


def test_loss_without_dropout(golden):
    model, _ = build()
    data = float64_batch(golden)
    model.eval()
    net_out = []
    model.diffusion.net.register_forward_hook(lambda m, i, o: net_out.append(o.detach().clone()))
    loss = model.loss_from(data['conditions'], data['deltas'], t=data['t'], noise=data['noise'])
    close(net_out[0], torch.from_numpy(golden['eval/c_pred']), 'net output C_hat (eval)')
    close(loss.detach(), torch.from_numpy(golden['eval/loss']), 'loss (eval)')


def test_runner_train_step_draws_as_the_official_code(golden):
    model, optim_wrapper = build()
    data = float64_batch(golden)
    model.train()
    net_out = []
    model.diffusion.net.register_forward_hook(lambda m, i, o: net_out.append(o.detach().clone()))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    record = []
    with rand_in_float64(record):
        torch.manual_seed(DRAWN_SEED)
        log_vars = model.train_step(dict(inputs=data['conditions'], data_samples=data['deltas']), optim_wrapper)
    # t, then the noise, each drawn once, the same numbers as the official code drew
    assert [name for name, _ in record] == ['rand', 'randn_like']
    assert torch.equal(record[0][1], torch.from_numpy(golden['drawn/rand']))
    assert torch.equal(record[1][1], torch.from_numpy(golden['drawn/randn_like']))
    close(net_out[0], torch.from_numpy(golden['drawn/c_pred']), 'net output C_hat (drawn t and noise)')
    close(log_vars['loss'].detach(), torch.from_numpy(golden['drawn/loss']), 'loss (drawn t and noise)')
    assert_step(model, optim_wrapper, before, golden, 'drawn')
