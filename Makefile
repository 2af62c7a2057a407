# The two commands of README.md. Both set up the environment first (tools/setup_env.sh: seconds when done).
VENV ?= .venv
PY := $(VENV)/bin/python
export VASTMAT_VENV := $(abspath $(VENV))

.PHONY: setup demo test
setup:
	tools/setup_env.sh

# The main job: render the demo VastMAT dataset, train a small YOLOX on its Protocol 1 train videos for a few
# iterations, test it on the test videos, print the metrics (work_dirs/demo_yolox/metrics.json).
demo: setup
	$(PY) tools/data/make_demo_data.py --out data/demo
	$(PY) tools/train.py configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py --work-dir work_dirs/demo_yolox \
		--cfg-options train_cfg.max_iters=20 train_cfg.val_interval=20 default_hooks.checkpoint.interval=20 \
		param_scheduler.0.end=20
	$(PY) tools/test.py configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py --work-dir work_dirs/demo_yolox \
		--checkpoint work_dirs/demo_yolox/iter_20.pth

# The full test suite (reads ../shared/data where it lies).
test: setup
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) -m pytest -q tests
