#!/usr/bin/env bash
# tools/dist_train.sh CONFIG NUM_PROCESSES [train.py args]
# Multi-node: NNODES, NODE_RANK, MASTER_ADDR, PORT. Without GPUs the processes use gloo on the CPU.
CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
PYTHON=${PYTHON:-python}

PYTHONPATH="$(dirname "$0")/..":$PYTHONPATH \
exec "$PYTHON" -m torch.distributed.run \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --master_addr="$MASTER_ADDR" \
    --nproc_per_node="$GPUS" \
    --master_port="$PORT" \
    "$(dirname "$0")/${VASTMAT_ENTRY:-train.py}" \
    "$CONFIG" \
    --launcher pytorch "${@:3}"
