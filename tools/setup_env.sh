#!/usr/bin/env bash
# One place that installs the VastMAT stack into a virtual environment (default: ./.venv).
#
#   tools/setup_env.sh            set up if needed (a second run on a set-up machine takes a second)
#   VASTMAT_VENV=/path tools/setup_env.sh   use another environment
#   VASTMAT_FORCE_SETUP=1 tools/setup_env.sh  reinstall even when the stamp says it is up to date
#   VASTMAT_PYTHON=python3.12 tools/setup_env.sh   the interpreter of a new environment (default: python3.11, else
#                                 python3.12)
#   VASTMAT_SYSTEM_TORCH=1 tools/setup_env.sh   use the torch / torchvision the interpreter already has (a CUDA build
#                                 on a GPU machine): the environment sees the system site-packages and installs no torch
#   VASTMAT_CUDA=0|1              build mmcv's CUDA ops or not (default: where torch sees a GPU); TORCH_CUDA_ARCH_LIST
#                                 (default: the compute capabilities of the GPUs present) and MAX_JOBS are honoured
#
# The stack (see DESIGN.md section 7): torch 2.14.1 + torchvision 0.29.1, mmcv 2.1.0 compiled from source with
# ops (C++20, setuptools 77-80, no build isolation), mmengine 0.10.7, mmdet 3.3.0, trackeval 1.3.0, lap, scipy,
# pluggy, sleap-io, movement and datumaro (labelled videos in, trajectories out: requirements/owndata.txt), ray
# (the optional launcher of sweeps, tuning and the zoo, requirements/ray.txt), psycopg (a tuning study in PostgreSQL,
# requirements/postgres.txt) with Debian's PostgreSQL server for its tests (apt-get, when initdb and pg_ctl are
# missing), plotly and selenium (the HTML report) with Debian's chromium and chromium-driver for its
# browser test, and this package in editable mode.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VASTMAT_VENV:-$ROOT/.venv}"
if [[ -n "${VASTMAT_PYTHON:-}" ]]; then
    PYTHON_BIN="$VASTMAT_PYTHON"
else  # the stack is tested on 3.11 and 3.12 (torch 2.14.1 has wheels for both)
    PYTHON_BIN=python3.11
    command -v python3.11 >/dev/null || ! command -v python3.12 >/dev/null || PYTHON_BIN=python3.12
fi
STAMP="$VENV/.vastmat-setup-stamp"

# The stamp records a hash of everything that decides what is installed; when it matches, nothing is done. The
# checkout is part of it: a venv set up from another checkout has its editable vastmat pointed at this one again.
fingerprint() {
    { cat "$ROOT"/requirements/*.txt "$ROOT/setup.cfg" "$ROOT/tools/setup_env.sh"
      echo "root=$ROOT system-torch=${VASTMAT_SYSTEM_TORCH:-} cuda=${VASTMAT_CUDA:-} arch=${TORCH_CUDA_ARCH_LIST:-}"; } |
        sha256sum | cut -d' ' -f1
}

# taken before installing: a requirement edited during the install must not be stamped as installed
FINGERPRINT="$(fingerprint)"
if [[ -z "${VASTMAT_FORCE_SETUP:-}" && -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$FINGERPRINT" ]]; then
    echo "[setup] $VENV is up to date"
    exit 0
fi

start=$(date +%s)
log() { echo "[setup $(( $(date +%s) - start ))s] $*"; }

if [[ ! -x "$VENV/bin/python" ]]; then
    command -v "$PYTHON_BIN" >/dev/null || { echo "[setup] $PYTHON_BIN not found; set VASTMAT_PYTHON" >&2; exit 1; }
    case "$("$PYTHON_BIN" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" in
        3.11|3.12) ;;
        *) echo "[setup] $PYTHON_BIN is Python $("$PYTHON_BIN" -V 2>&1); the stack needs 3.11 or 3.12 (VASTMAT_PYTHON)" >&2
           exit 1 ;;
    esac
    venv_args=()
    [[ -z "${VASTMAT_SYSTEM_TORCH:-}" ]] || venv_args=(--system-site-packages)
    log "creating virtual environment $VENV ($("$PYTHON_BIN" -V 2>&1))"
    "$PYTHON_BIN" -m venv "${venv_args[@]}" "$VENV"
fi
PY="$VENV/bin/python"
PIP=("$PY" -m pip --disable-pip-version-check)

if [[ -n "${VASTMAT_SYSTEM_TORCH:-}" ]]; then
    "$PY" -c 'import torch, torchvision' 2>/dev/null ||
        { echo "[setup] VASTMAT_SYSTEM_TORCH=1 but $PY cannot import torch and torchvision" >&2; exit 1; }
    log "build requirements (setuptools<81, ninja; torch $("$PY" -c 'import torch; print(torch.__version__)') of the system)"
    grep -v -E '^(torch|torchvision)([=<>! ]|$)' "$ROOT/requirements/build.txt" > "$VENV/.build-requirements.txt"
    "${PIP[@]}" install -q -r "$VENV/.build-requirements.txt"
else
    log "build requirements (torch, torchvision, setuptools<81, ninja)"
    "${PIP[@]}" install -q -r "$ROOT/requirements/build.txt"
fi

# mmcv's CUDA ops: built where torch is a CUDA build and sees a GPU (or VASTMAT_CUDA=1), for the GPUs present
CUDA_BUILD=0
if [[ "${VASTMAT_CUDA:-}" == 1 ]]; then
    CUDA_BUILD=1
elif [[ -z "${VASTMAT_CUDA:-}" ]] && "$PY" -c 'import torch, sys; sys.exit(0 if torch.version.cuda and torch.cuda.device_count() else 1)' 2>/dev/null; then
    CUDA_BUILD=1
fi
if [[ $CUDA_BUILD == 1 ]]; then
    export FORCE_CUDA=1
    if [[ -z "${TORCH_CUDA_ARCH_LIST:-}" ]]; then
        TORCH_CUDA_ARCH_LIST="$("$PY" -c 'import torch; print(";".join(sorted({"%d.%d" % torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())})))')"
        [[ -n "$TORCH_CUDA_ARCH_LIST" ]] || { echo "[setup] VASTMAT_CUDA=1 without a GPU: set TORCH_CUDA_ARCH_LIST" >&2; exit 1; }
        export TORCH_CUDA_ARCH_LIST
    fi
    command -v nvcc >/dev/null || [[ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]] ||
        { echo "[setup] mmcv's CUDA ops need nvcc (CUDA_HOME or PATH); VASTMAT_CUDA=0 builds the CPU ops only" >&2; exit 1; }
fi

# mmcv 2.1.0 with ops is in place (with CUDA ops where they are built): exit status 0
mmcv_ready() {
    "$PY" - "$CUDA_BUILD" <<'PYCHECK' >/dev/null 2>&1
import sys
import mmcv, mmcv.ops
assert mmcv.__version__ == '2.1.0'
assert sys.argv[1] == '0' or mmcv.ops.get_compiling_cuda_version() != 'not available'
PYCHECK
}

if ! mmcv_ready; then
    # mmcv's setup.py hard-codes -std=c++17 (host compiler and nvcc); torch's headers need C++20 from 2.14 on (its
    # own extension builder then passes -std=c++20): compile through wrappers that rewrite the flag (no other way
    # short of patching mmcv's sources). They also drop -g (Python's CFLAGS): debug info makes the build slower and
    # the wheel several times larger. torch 2.11 still takes C++17: no rewrite there.
    WRAP="$(mktemp -d)"
    trap 'rm -rf "$WRAP"' EXIT
    STD=c++17
    grep -q -- "-std=c++20" "$("$PY" -c 'import torch.utils.cpp_extension as c; print(c.__file__)')" && STD=c++20
    wrap() {  # wrap NAME REAL: $WRAP/NAME runs REAL with -std=c++17 rewritten to -std=$STD and -g dropped
        cat > "$WRAP/$1" <<WRAPPER
#!/usr/bin/env bash
args=()
for a in "\$@"; do
    case "\$a" in -std=c++17) args+=(-std=$STD) ;; -g) ;; *) args+=("\$a") ;; esac
done
exec "$2" "\${args[@]}"
WRAPPER
        chmod +x "$WRAP/$1"
    }
    for cc in gcc g++ cc c++; do
        wrap "$cc" "$(command -v "$cc")"
    done
    build_env=(PATH="$WRAP:$PATH" CC="$WRAP/gcc" CXX="$WRAP/g++" MMCV_WITH_OPS=1 MAX_JOBS="${MAX_JOBS:-$(nproc)}")
    reinstall=()
    if [[ $CUDA_BUILD == 1 ]]; then
        wrap nvcc "$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")"
        build_env+=(PYTORCH_NVCC="$WRAP/nvcc")
        # pip's wheel cache may hold a CPU-only build of the same version: build afresh, replace what is there
        reinstall=(--no-cache-dir --force-reinstall --no-deps)
        log "compiling mmcv 2.1.0 with CPU and CUDA ops (sm ${TORCH_CUDA_ARCH_LIST}, -std=$STD; minutes with many cores)"
    else
        log "compiling mmcv 2.1.0 with ops (-std=$STD; 8 to 30 minutes on 2 cores; pip caches the wheel afterwards)"
    fi
    env "${build_env[@]}" "${PIP[@]}" install -q --no-build-isolation "${reinstall[@]}" "mmcv==2.1.0"
    mmcv_ready || { echo "[setup] mmcv 2.1.0 was installed but its ops do not load (CUDA ops: $CUDA_BUILD)" >&2; exit 1; }
fi

log "runtime, test and optional requirements"
"${PIP[@]}" install -q -r "$ROOT/requirements/runtime.txt" -r "$ROOT/requirements/tests.txt" \
    -r "$ROOT/requirements/optional.txt"

log "own-data requirements: sleap-io, movement, pandas, pyarrow; datumaro without its pins (requirements/owndata.txt)"
"${PIP[@]}" install -q -r "$ROOT/requirements/owndata.txt"
"${PIP[@]}" install -q --no-deps -r "$ROOT/requirements/datumaro.txt"

if ! "$PY" -c "import ray" >/dev/null 2>&1; then
    log "ray, the optional launcher of sweeps, tuning and the zoo (tests/experiments/test_sweep_ray.py; about 250 MB)"
    "${PIP[@]}" install -q -r "$ROOT/requirements/ray.txt"
fi

log "psycopg, the PostgreSQL driver of a shared tuning study (requirements/postgres.txt)"
"${PIP[@]}" install -q -r "$ROOT/requirements/postgres.txt"

# transformers 5 beside the environment, never in it: tests/utils/test_compat.py puts it on the path of a fresh interpreter to
# check that the stack still imports where a user has it (mmpretrain 1.2.0 breaks there; vastmat/utils/compat.py).
# Only what the environment lacks goes there: pip resolves against the environment, then those exact versions.
T5="$VENV/test-sites/transformers5"
if [[ ! -f "$T5/.complete" ]]; then
    log "transformers 5 beside the environment ($T5, for tests/utils/test_compat.py)"
    rm -rf "$T5" && mkdir -p "$T5"
    if "${PIP[@]}" install -q --dry-run --report "$T5/.report.json" "transformers>=5,<6" &&
        "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print("\n".join(i["metadata"]["name"] + "==" + i["metadata"]["version"] for i in r["install"]))' \
            "$T5/.report.json" > "$T5/.requirements.txt" &&
        "${PIP[@]}" install -q --no-deps --target "$T5" -r "$T5/.requirements.txt"; then
        touch "$T5/.complete"
    else
        log "transformers 5 could not be installed from the package index: tests/utils/test_compat.py will skip"
    fi
fi

# Debian packages the tests use (servers and a browser they start and stop themselves); without apt-get the setup
# says what is missing and those tests skip, saying why.
apt_install() {  # apt_install WHAT PACKAGE...
    local what="$1"; shift
    if ! command -v apt-get >/dev/null 2>&1; then
        log "no $what and no apt-get: install $* by hand, else its tests skip"
        return
    fi
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    log "$what (Debian's $*)"
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# The PostgreSQL server the tests start and stop (a throwaway cluster: tests/conftest.py postgres_url). Debian's
# package puts initdb and pg_ctl in /usr/lib/postgresql/<version>/bin, off PATH.
if ! command -v pg_ctl >/dev/null 2>&1 && ! compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null; then
    apt_install "PostgreSQL server, for tests/experiments/test_tune_postgres.py" postgresql
fi

# Headless Chromium and its WebDriver, for the HTML report's browser test (tests/experiments/test_report.py) and benchmark
if ! command -v chromedriver >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
    apt_install "headless Chromium, for tests/experiments/test_report.py" chromium chromium-driver
fi

log "vastmat (editable)"
"${PIP[@]}" install -q --no-build-isolation --no-deps -e "$ROOT"

log "smoke test"
"$PY" - <<'PYCHECK'
import sys
import mmcv, mmcv.ops, mmdet, mmengine, torch, trackeval, lap, scipy, pluggy, vastmat
from mmcv.ops import batched_nms
boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 11., 11.]])
dets, keep = batched_nms(boxes, torch.tensor([0.9, 0.8]), torch.tensor([0, 0]), dict(iou_threshold=0.5))
assert keep.tolist() == [0], keep
ops = mmcv.ops.get_compiling_cuda_version()
print(f'torch {torch.__version__}, mmcv {mmcv.__version__} (CUDA ops: {"none" if ops == "not available" else ops}), '
      f'mmengine {mmengine.__version__}, mmdet {mmdet.__version__}, '
      f'trackeval {trackeval.__version__ if hasattr(trackeval, "__version__") else "?"}, vastmat {vastmat.__version__}, '
      f'Python {sys.version.split()[0]}')
PYCHECK

# numba compiles the package's kernels at their first call and caches them beside the sources: compiled here once,
# not in every process of the first run (vastmat/apis/compile_kernels.py)
log "numba kernels"
"$PY" -m vastmat.apis.compile_kernels

echo "$FINGERPRINT" > "$STAMP"
log "done"
