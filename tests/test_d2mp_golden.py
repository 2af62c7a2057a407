"""D2MP training against the official DiffMOT code, one batch (issue 39): the loss, the gradient of every parameter
and the parameters after one step of the config's optimizer (built by mmengine) equal the official ones
(tests/fixtures/d2mp_train_official: how they were made). The loss against its formula is in tests/test_diffmot.py.

Three cases, all in training mode (dropout on, as in the official training loop) unless said:
* ``given``: ``loss_from(conditions, deltas, t=..., noise=...)`` with the helper's ``t`` and noise (the official
  ``torch.rand`` / ``torch.randn_like`` returned them), dropout masks from ``torch.manual_seed(DROPOUT_SEED)``;
* ``eval``: the same in eval mode (no dropout): loss and net output, which do not depend on torch's dropout stream;
* ``drawn``: the runner's path, ``model.train_step`` with the optimizer wrapper, after
  ``torch.manual_seed(DRAWN_SEED)``; the port draws dropout masks, ``t`` and noise in the official order.
"""
import ast
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper

from conftest import REPO, npz_arrays
from helpers.d2mp_train_inputs import (DRAWN_SEED, DROPOUT_SEED, ENCODER_DIM, TF_LAYER, d2mp_train_batch,
                                       d2mp_train_state)

from vastmat.registry import MODELS

FIXTURE = osp.join(REPO, 'tests', 'fixtures', 'd2mp_train_official', 'train_step.npz')
CONFIG = osp.join(REPO, 'configs', 'd2mp', 'd2mp_1xb2048-800e_vastmat-p1.py')
# float32: the two sides run the same operations, so differences are a few float32 roundings at most
RTOL, ATOL = 1e-5, 1e-6


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
    return model, build_optim_wrapper(model, cfg.optim_wrapper)


def close(actual, expected, what, rtol=RTOL, atol=ATOL):
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, msg=lambda m: f'{what}: {m}')


def assert_step(model, before, golden, case):
    """Parameters after the step equal the official ones (before + the official change), and so does the change
    itself: within 1e-8 (1e-4 of the learning rate) plus one float32 rounding of the parameter, so that a learning
    rate off by 1e-3 would show. Parameters without a gradient stay bitwise unchanged on both sides."""
    step = section(golden, f'{case}/step/')
    params = dict(model.named_parameters())
    assert set(step) == set(params)
    for name, p in params.items():
        close(p.detach(), before[name] + step[name], f'{case}: {name} after one step')
        error = (p.detach() - before[name] - step[name]).abs()
        bound = 1e-8 + 2 * torch.finfo(torch.float32).eps * before[name].abs()
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
    data = d2mp_train_batch()
    # the helper still makes what the official torch.rand / torch.randn_like returned when the fixture was made
    assert torch.equal(data['u'], torch.from_numpy(golden['given/rand']))
    assert torch.equal(data['noise'], torch.from_numpy(golden['given/randn_like']))
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
    assert_step(model, before, golden, 'given')


def test_loss_without_dropout(golden):
    model, _ = build()
    data = d2mp_train_batch()
    model.eval()
    net_out = []
    model.diffusion.net.register_forward_hook(lambda m, i, o: net_out.append(o.detach().clone()))
    loss = model.loss_from(data['conditions'], data['deltas'], t=data['t'], noise=data['noise'])
    close(net_out[0], torch.from_numpy(golden['eval/c_pred']), 'net output C_hat (eval)')
    close(loss.detach(), torch.from_numpy(golden['eval/loss']), 'loss (eval)')


def test_runner_train_step_draws_as_the_official_code(golden):
    model, optim_wrapper = build()
    data = d2mp_train_batch()
    model.train()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    torch.manual_seed(DRAWN_SEED)
    log_vars = model.train_step(dict(inputs=data['conditions'], data_samples=data['deltas']), optim_wrapper)
    close(log_vars['loss'].detach(), torch.from_numpy(golden['drawn/loss']), 'loss (drawn t and noise)')
    assert_step(model, before, golden, 'drawn')
