#!/usr/bin/env bash
# tools/slurm_test.sh PARTITION JOB_NAME CONFIG WORK_DIR [test.py args, e.g. --checkpoint CKPT]
# Same variables as tools/slurm_train.sh (GPUS, GPUS_PER_NODE, CPUS_PER_TASK, SRUN_ARGS).
VASTMAT_ENTRY=test.py exec "$(dirname "$0")/slurm_train.sh" "$@"
