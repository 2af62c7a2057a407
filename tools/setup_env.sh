#!/usr/bin/env bash
# One place that installs the VastMAT stack into a virtual environment (default: ./.venv).
#
#   tools/setup_env.sh            set up if needed (a second run on a set-up machine takes a second)
#   VASTMAT_VENV=/path tools/setup_env.sh   use another environment
#   VASTMAT_FORCE_SETUP=1 tools/setup_env.sh  reinstall even when the stamp says it is up to date
#
# The stack (see DESIGN.md section 7): torch 2.14.1 + torchvision 0.29.1, mmcv 2.1.0 compiled from source with
# ops (C++20, setuptools 77-80, no build isolation), mmengine 0.10.7, mmdet 3.3.0, trackeval 1.3.0, lap, scipy,
# pluggy, ray (the optional launcher of sweeps, tuning and the zoo, requirements/ray.txt), psycopg (a tuning study
# in PostgreSQL, requirements/postgres.txt) with Debian's PostgreSQL server for its tests (apt-get, when initdb and
# pg_ctl are missing), plotly and selenium (the HTML report) with Debian's chromium and chromium-driver for its
# browser test, and this package in editable mode.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VASTMAT_VENV:-$ROOT/.venv}"
PYTHON_BIN="${VASTMAT_PYTHON:-python3.11}"
STAMP="$VENV/.vastmat-setup-stamp"

# The stamp records a hash of everything that decides what is installed; when it matches, nothing is done.
fingerprint() {
    cat "$ROOT"/requirements/*.txt "$ROOT/setup.cfg" "$ROOT/tools/setup_env.sh" | sha256sum | cut -d' ' -f1
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
    log "creating virtual environment $VENV"
    "$PYTHON_BIN" -m venv "$VENV"
fi
PY="$VENV/bin/python"
PIP=("$PY" -m pip --disable-pip-version-check)

log "build requirements (torch, torchvision, setuptools<81, ninja)"
"${PIP[@]}" install -q -r "$ROOT/requirements/build.txt"

if ! "$PY" -c "import mmcv, mmcv.ops; assert mmcv.__version__ == '2.1.0'" >/dev/null 2>&1; then
    # mmcv's setup.py hard-codes -std=c++17, torch 2.14's headers need C++20: compile through wrappers that
    # rewrite the flag (no other way short of patching mmcv's sources). They also drop -g (Python's CFLAGS):
    # debug info makes the build slower and the wheel several times larger.
    WRAP="$(mktemp -d)"
    trap 'rm -rf "$WRAP"' EXIT
    for cc in gcc g++ cc c++; do
        real="$(command -v "$cc")"
        cat > "$WRAP/$cc" <<WRAPPER
#!/usr/bin/env bash
args=()
for a in "\$@"; do
    case "\$a" in -std=c++17) args+=(-std=c++20) ;; -g) ;; *) args+=("\$a") ;; esac
done
exec "$real" "\${args[@]}"
WRAPPER
        chmod +x "$WRAP/$cc"
    done
    log "compiling mmcv 2.1.0 with ops (about 30 minutes on 2 cores; pip caches the wheel afterwards)"
    PATH="$WRAP:$PATH" CC="$WRAP/gcc" CXX="$WRAP/g++" MMCV_WITH_OPS=1 MAX_JOBS="${MAX_JOBS:-$(nproc)}" \
        "${PIP[@]}" install -q --no-build-isolation "mmcv==2.1.0"
fi

log "runtime, test and optional requirements"
"${PIP[@]}" install -q -r "$ROOT/requirements/runtime.txt" -r "$ROOT/requirements/tests.txt" \
    -r "$ROOT/requirements/optional.txt"

if ! "$PY" -c "import ray" >/dev/null 2>&1; then
    log "ray, the optional launcher of sweeps, tuning and the zoo (tests/test_sweep_ray.py; about 250 MB)"
    "${PIP[@]}" install -q -r "$ROOT/requirements/ray.txt"
fi

log "psycopg, the PostgreSQL driver of a shared tuning study (requirements/postgres.txt)"
"${PIP[@]}" install -q -r "$ROOT/requirements/postgres.txt"

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
    apt_install "PostgreSQL server, for tests/test_tune_postgres.py" postgresql
fi

# Headless Chromium and its WebDriver, for the HTML report's browser test (tests/test_report.py) and benchmark
if ! command -v chromedriver >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
    apt_install "headless Chromium, for tests/test_report.py" chromium chromium-driver
fi

log "vastmat (editable)"
"${PIP[@]}" install -q --no-build-isolation --no-deps -e "$ROOT"

log "smoke test"
"$PY" - <<'PYCHECK'
import mmcv, mmcv.ops, mmdet, mmengine, torch, trackeval, lap, scipy, pluggy, vastmat
from mmcv.ops import batched_nms
boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 11., 11.]])
dets, keep = batched_nms(boxes, torch.tensor([0.9, 0.8]), torch.tensor([0, 0]), dict(iou_threshold=0.5))
assert keep.tolist() == [0], keep
print(f'torch {torch.__version__}, mmcv {mmcv.__version__}, mmengine {mmengine.__version__}, '
      f'mmdet {mmdet.__version__}, trackeval {trackeval.__version__ if hasattr(trackeval, "__version__") else "?"}, '
      f'vastmat {vastmat.__version__}')
PYCHECK

echo "$FINGERPRINT" > "$STAMP"
log "done"
