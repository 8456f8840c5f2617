#!/usr/bin/env bash
# Installs what a fresh machine lacks to build and test trnc: Debian packages
# (MLIR/LLVM 19, clang/lld, Catch2, nlohmann_json, pybind11) and Python
# packages (torch==2.13.0 CPU from the wheel on disk, pytest, build tools).
# Idempotent: takes a second or two when everything is present.
set -euo pipefail

APT_PACKAGES=(
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
  clang-19 lld-19 ccache ninja-build libclang-rt-19-dev
  catch2 nlohmann-json3-dev pybind11-dev libzstd-dev zlib1g-dev libxml2-dev
  libopenblas-dev
)
# Exact pins only: a range lets pip resolve a newer, multi-GB CUDA torch.
PIP_PACKAGES=(
  "torch==2.13.0" "pytest" "numpy" "expecttest" "scikit-build-core>=0.10" "pybind11>=2.10"
  "ninja" "cmake>=3.20"
)

PYTHON=${PYTHON:-python3}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Ask pip only for what is missing (pip itself takes seconds even for no-ops).
need=$("$PYTHON" - "${PIP_PACKAGES[@]}" <<'PY'
import sys
from importlib import metadata
try:
    from packaging.requirements import Requirement
except ImportError:  # pip vendors packaging
    from pip._vendor.packaging.requirements import Requirement
out = []
for spec in sys.argv[1:]:
    req = Requirement(spec)
    try:
        version = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        out.append(spec)
        continue
    if req.specifier and not req.specifier.contains(version.split("+")[0], prereleases=True):
        out.append(spec)
print(" ".join(out))
PY
)
if [ -n "$need" ]; then
  echo "setup: installing Python packages: $need"
  # shellcheck disable=SC2086
  "$PYTHON" -m pip install -q $need
fi
echo "setup: ok"
