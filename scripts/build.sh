#!/usr/bin/env bash
# Builds everything (C++ libraries, tools, tests, the trnc._C extension) in
# build/ and installs the trnc package: one CMake build, driven by pip through
# scikit-build-core so the C++ tests and the extension share it.
# Incremental: a no-op rebuild takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# --no-build-isolation: an isolated build env would resolve a (CUDA) torch.
"$PYTHON" -m pip install -q --no-build-isolation --no-deps . 2>&1 | grep -v "Running pip as the 'root' user" || true
"$PYTHON" -c "import trnc, trnc._C" || { echo "build: trnc failed to import" >&2; exit 1; }
echo "build: ok (build/, trnc $("$PYTHON" -c 'import trnc; print(trnc.__version__)'))"
