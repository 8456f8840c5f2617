#!/usr/bin/env bash
# Opt-in, slow (a full build of the extension, many minutes on two cores): checks
# that a plain `pip install .` into a fresh virtual environment yields a package
# that imports and compiles a model, the way a new user installs trnc. Not part
# of scripts/test.sh. The venv sees the system site-packages only for torch (a
# multi-GB download otherwise); everything trnc declares is installed into it.
# Usage: scripts/install_test.sh [WORK_DIR]   (default: a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
work=${1:-$(mktemp -d -t trnc-install-XXXXXX)}
echo "install-test: fresh venv in $work/venv"
"$PYTHON" -m venv --system-site-packages "$work/venv"
py="$work/venv/bin/python"
# The build happens in its own tree so build/ (scripts/build.sh's) is untouched.
"$py" -m pip install --no-build-isolation -Cbuild-dir="$work/build" . 2>&1 | grep -v "Running pip as the 'root' user" | tail -n 3
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
