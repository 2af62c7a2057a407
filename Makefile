# The two commands of README.md. Both set up the environment first (tools/setup_env.sh: seconds when done).
VENV ?= .venv
PY := $(VENV)/bin/python
export VASTMAT_VENV := $(abspath $(VENV))

.PHONY: setup demo test
setup:
	tools/setup_env.sh

# The main job: render the demo VastMAT dataset, train a small YOLOX on its Protocol 1 train videos for 100
# iterations, test it on the test videos, print the metrics (work_dirs/demo_yolox/metrics.json).
demo: setup
	$(PY) tools/data/make_demo_data.py --out data/demo
	$(PY) tools/train.py configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py --work-dir work_dirs/demo_yolox \
		--cfg-options train_cfg.max_iters=100 train_cfg.val_interval=100 default_hooks.checkpoint.interval=100 \
		param_scheduler.0.end=100
	$(PY) tools/test.py configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py --work-dir work_dirs/demo_yolox \
		--checkpoint work_dirs/demo_yolox/iter_100.pth

# The full test suite (reads ../shared/data where it lies).
test: setup
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) -m pytest -q tests
