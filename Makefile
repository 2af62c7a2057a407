# The two commands of README.md. Both set up the environment first (tools/setup_env.sh: seconds when done).
VENV ?= .venv
PY := $(VENV)/bin/python
export VASTMAT_VENV := $(abspath $(VENV))

.PHONY: setup demo test
setup:
	tools/setup_env.sh

# The main job: the model-zoo benchmark on the built-in demo data (tools/zoo_benchmark.py: renders data/demo if
# absent, trains on the Protocol 1 train videos everything the eight trackers learn (the demo YOLOX, a ReID model,
# D2MP, FairMOT, QDTrack, TransTrack, MOTIP; about 12 minutes on 2 cores with 2 worker processes, reused by the next
# run), tracks the test videos with every zoo tracker, with its own association and with CDA fixed / adaptive where it takes a matcher,
# prints the paper's Table 5 and Table 8 layouts and saves JSON, CSV and plots to work_dirs/zoo_benchmark).
# ZOO_ARGS passes options, e.g.
#   make demo ZOO_ARGS="--trackers ByteTrack FairMOT"
#   make demo ZOO_ARGS="--data-root DIR --det-root DETS"
ZOO_ARGS ?=
demo: setup
	$(PY) tools/zoo_benchmark.py $(ZOO_ARGS)

# The full test suite (reads ../shared/data where it lies), on every core (pytest-xdist; TEST_WORKERS=1 for one;
# tests sharing an expensive module fixture carry one xdist_group, so one worker makes it once).
TEST_WORKERS ?= auto
test: setup
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=15 tests
