"""Distributed runs on machines without a GPU.

mmengine's ``init_dist`` always calls ``torch.cuda.set_device``, which fails without CUDA. When there is no GPU we
start the gloo process group ourselves from the launcher's environment before the runner is built (mmengine then
skips its own initialisation) and wrap the model with ``device_ids=None`` (DESIGN.md section 7).
"""
from __future__ import annotations

import os
import subprocess
from datetime import timedelta

import torch
import torch.distributed as torch_dist

DEFAULT_PORT = '29500'  # torch.distributed's default


def _environment_from_slurm() -> None:
    os.environ['RANK'] = os.environ['SLURM_PROCID']
    os.environ['WORLD_SIZE'] = os.environ['SLURM_NTASKS']
    os.environ['LOCAL_RANK'] = os.environ.get('SLURM_LOCALID', '0')
    os.environ.setdefault('MASTER_PORT', DEFAULT_PORT)
    if 'MASTER_ADDR' not in os.environ:
        node_list = os.environ['SLURM_NODELIST']
        os.environ['MASTER_ADDR'] = subprocess.getoutput(f'scontrol show hostname {node_list} | head -n1')


def _environment_from_mpi() -> None:
    os.environ['RANK'] = os.environ['OMPI_COMM_WORLD_RANK']
    os.environ['WORLD_SIZE'] = os.environ['OMPI_COMM_WORLD_SIZE']
    os.environ['LOCAL_RANK'] = os.environ['OMPI_COMM_WORLD_LOCAL_RANK']
    os.environ.setdefault('MASTER_PORT', DEFAULT_PORT)
    if 'MASTER_ADDR' not in os.environ:
        raise KeyError('launcher mpi: the environment variable MASTER_ADDR is not set')


def needs_cpu_distributed(launcher: str) -> bool:
    """Whether a run with ``launcher`` must be initialised here (distributed, no CUDA, no process group yet)."""
    return launcher != 'none' and not torch.cuda.is_available() and not (
        torch_dist.is_available() and torch_dist.is_initialized())


def init_cpu_distributed(launcher: str, timeout_s: int = 1800) -> None:
    """Start a gloo process group from the environment of ``launcher`` (``pytorch`` = torchrun, ``slurm``, ``mpi``)."""
    if launcher == 'slurm':
        _environment_from_slurm()
    elif launcher == 'mpi':
        _environment_from_mpi()
    elif launcher != 'pytorch':
        raise ValueError(f'launcher must be one of none, pytorch, slurm, mpi; got {launcher!r}')
    missing = [k for k in ('RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT') if k not in os.environ]
    if missing:
        raise KeyError(f'launcher {launcher}: environment variables {missing} are not set; start the run with '
                       'tools/dist_train.sh / tools/dist_test.sh (torchrun) or the slurm scripts')
    torch_dist.init_process_group(backend='gloo', timeout=timedelta(seconds=timeout_s))


def close_distributed() -> None:
    """At the end of a distributed run: wait for every rank, then close the process group. Ranks that leave at
    different times with the group open can abort in gloo's threads at exit ("terminate called without an active
    exception", SIGABRT), failing a run that had finished; torch asks for ``destroy_process_group`` before exit."""
    if torch_dist.is_available() and torch_dist.is_initialized():
        torch_dist.barrier()
        torch_dist.destroy_process_group()
