#!/usr/bin/env bash
# Checks that a plain `pip install .` into a fresh virtual environment yields a
# package that imports and compiles a model, the way a new user installs trnc.
# The build is from scratch (CMake configure, only the wheel's targets) in its
# own tree, build-install/ (wiped first), a sibling of build/: with ccache and a
# shared CCACHE_BASEDIR (scripts/build.sh sets the same default) the compiles
# that scripts/build.sh already did are cache hits, so after the test command's
# build this takes minutes, not the 18+ of a cold build. The venv sees the
# system site-packages only for torch (a multi-GB download otherwise);
# everything trnc declares is installed into it.
# Usage: scripts/install_test.sh [WORK_DIR]   (venv; default: a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
work=${1:-$(mktemp -d -t trnc-install-XXXXXX)}
start=$(date +%s)
echo "install-test: fresh venv in $work/venv, build in build-install/"
"$PYTHON" -m venv --system-site-packages "$work/venv"
py="$work/venv/bin/python"
rm -rf build-install
"$py" -m pip install --no-build-isolation -Cbuild-dir=build-install . 2>&1 | grep -v "Running pip as the 'root' user" | tail -n 3
built=$(date +%s)
(cd "$work" && TRNC_CACHE_DIR="$work/cache" "$py" - <<'PY'
import importlib.metadata, torch, trnc
dist = importlib.metadata.distribution("trnc")
site = str(dist.locate_file(""))
assert trnc.__file__.startswith(site), (trnc.__file__, site)  # the venv's copy, not a tree
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
compiled = torch.compile(model, backend="neuron")
for batch in (8, 4):
    x = torch.randn(batch, 16)
    torch.testing.assert_close(compiled(x), model(x))
print(f"install-test: ok (trnc {trnc.__version__} from {trnc.__file__}; requires {dist.requires})")
PY
)
echo "install-test: pip install $((built - start)) s, import and compile $(($(date +%s) - built)) s"
