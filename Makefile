# The two commands of README.md. Both set up the environment first (tools/setup_env.sh: seconds when done).
VENV ?= .venv
PY := $(VENV)/bin/python
export VASTMAT_VENV := $(abspath $(VENV))

.PHONY: setup demo test
setup:
	tools/setup_env.sh

# The main job: render the demo VastMAT dataset, train a small YOLOX on its Protocol 1 train videos for 100
# iterations, test it on the test videos and dump its detections, track them with ByteTrack, then compare ByteTrack's
# matchers (IoU, CDA fixed, CDA adaptive) on simulated detections of the same videos.
demo: setup
	$(PY) tools/data/make_demo_data.py --out data/demo
	$(PY) tools/train.py configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py --work-dir work_dirs/demo_yolox \
		--cfg-options train_cfg.max_iters=100 train_cfg.val_interval=100 default_hooks.checkpoint.interval=100 \
		param_scheduler.0.end=100
	$(PY) tools/test.py configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py --work-dir work_dirs/demo_yolox \
		--checkpoint work_dirs/demo_yolox/iter_100.pth --dump-dets work_dirs/demo_yolox/dets
	# the 100-iteration detector scores below 0.2: ByteTrack's thresholds lowered to match
	$(PY) tools/test.py configs/bytetrack/bytetrack_cached-dets.py --det-root work_dirs/demo_yolox/dets \
		--data-root data/demo --work-dir work_dirs/demo_bytetrack --cfg-options model.tracker.track_thresh=0.02 \
		model.tracker.low_thresh=0.01 model.tracker.min_box_area=None
	$(PY) tools/data/simulate_detections.py --data-root data/demo --split protocol1/test --out data/demo_simulated
	$(PY) tools/analysis/matcher_table.py --data-root data/demo_simulated --det-root data/demo_simulated \
		--work-dir work_dirs/demo_matchers --matchers iou cda-fixed cda-adaptive

# The full test suite (reads ../shared/data where it lies), on every core (pytest-xdist; TEST_WORKERS=1 for one;
# tests sharing an expensive module fixture carry one xdist_group, so one worker makes it once).
TEST_WORKERS ?= auto
test: setup
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=15 tests
