#!/usr/bin/env bash
# Builds everything (C++ libraries, tools, tests, the trnc._C extension) in
# build/ and installs the trnc package: one CMake build, driven by pip through
# scikit-build-core so the C++ tests and the extension share it.
# Incremental: a no-op rebuild takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# scikit-build-core exports Python's own compiler (gcc) unless CC/CXX are set;
# prefer clang-19 (+ lld, chosen in CMakeLists.txt): ~25% faster MLIR builds.
if [ -z "${CXX:-}" ] && command -v clang++-19 >/dev/null && command -v clang-19 >/dev/null; then
  export CC=clang-19 CXX=clang++-19
fi
# ccache (CMakeLists.txt) keyed on paths relative to the checkout, so that
# another build tree of it (scripts/install_test.sh's build-install/) hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
# --no-build-isolation: an isolated build env would resolve a (CUDA) torch, so
# the build requirements must be installed already (scripts/setup.sh).
for module in scikit_build_core pybind11; do
  if ! "$PYTHON" -c "import $module" 2>/dev/null; then
    echo "build: $PYTHON has no ${module//_/-}: run scripts/setup.sh, or" \
         "$PYTHON -m pip install 'scikit-build-core>=1.1' 'pybind11>=2.12'" >&2
    exit 1
  fi
done
log=$(mktemp)
# build.targets=all: every tool and test too (a plain pip install builds only _C).
if ! "$PYTHON" -m pip install -q --no-build-isolation --no-deps -Cbuild.targets=all . >"$log" 2>&1; then
  grep -v "Running pip as the 'root' user" "$log" >&2 || true
  rm -f "$log"
  echo "build: FAILED (pip install of the trnc package; compiler output above)" >&2
  exit 1
fi
grep -v "Running pip as the 'root' user" "$log" || true
rm -f "$log"
# Run from / so an in-tree python/trnc cannot stand in for the installed one.
(cd / && "$PYTHON" -c "import trnc, trnc._C") || { echo "build: trnc failed to import" >&2; exit 1; }
echo "build: ok (build/, trnc $("$PYTHON" -c 'import trnc; print(trnc.__version__)'))"
