# The two commands of README.md. Both set up the environment first (tools/setup_env.sh: seconds when done).
VENV ?= .venv
PY := $(VENV)/bin/python
export VASTMAT_VENV := $(abspath $(VENV))

.PHONY: setup demo test
setup:
	tools/setup_env.sh

# The main job: render a small detection set, train a small YOLOX on it for a few iterations, test it, print metrics.
demo: setup
	$(PY) tools/data/make_detection_demo.py --out data/demo_det
	$(PY) tools/train.py configs/yolox/yolox_debug_1xb4-2it_synthetic-det.py --work-dir work_dirs/demo_yolox \
		--cfg-options train_cfg.max_iters=20 train_cfg.val_interval=20 default_hooks.checkpoint.interval=20 \
		param_scheduler.0.end=20
	$(PY) tools/test.py configs/yolox/yolox_debug_1xb4-2it_synthetic-det.py --work-dir work_dirs/demo_yolox \
		--checkpoint work_dirs/demo_yolox/iter_20.pth

# The full test suite (reads ../shared/data where it lies).
test: setup
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) -m pytest -q tests
