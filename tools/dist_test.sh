#!/usr/bin/env bash
# tools/dist_test.sh CONFIG NUM_PROCESSES [test.py args, e.g. --checkpoint CKPT]
# Same launcher and environment variables as tools/dist_train.sh (NNODES, NODE_RANK, MASTER_ADDR, PORT).
VASTMAT_ENTRY=test.py exec "$(dirname "$0")/dist_train.sh" "$@"
