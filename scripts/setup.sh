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
  "torch==2.13.0" "pytest" "numpy" "expecttest" "scikit-build-core>=1.1" "pybind11>=2.10"
  "ninja" "cmake>=3.20"
  # optional for users (pip install 'trnc[plot]'): trnc.plot's pictures, tested here
  "matplotlib==3.11.2"
)
# Test dependency of the Hugging Face sweep (benchmarks/hf_sweep, test_hf_models.py):
# transformers and its whole dependency closure, each pinned and installed with
# --no-deps, so pip never resolves (and never replaces) torch. None of these needs torch.
HF_PACKAGES=(
  "transformers==5.23.0" "huggingface_hub==2.4.0" "safetensors==0.8.0" "tokenizers==0.23.3"
  "tqdm==4.70.1" "typer==0.29.2" "annotated-doc==0.0.7" "click==8.5.1" "hf-xet==1.8.0"
  "httpx2==2.16.2" "httpcore2==2.16.2" "rich==15.0.0" "shellingham==1.5.4" "anyio==4.16.0"
  "typing_extensions==4.16.0" "idna==3.20" "markdown-it-py==4.3.0" "truststore==0.10.5"
  "h11==0.16.0" "mdurl==0.1.2"
)

# Test dependencies of the vision sweep (benchmarks/timm_sweep, test_vision_sweep.py),
# --no-deps for the same reason. torchvision 0.28.0 matches torch 2.13.0; PyPI serves
# its CUDA build, whose C extension does not load beside the CPU torch, and whose
# import then fails (operator torchvision::nms does not exist). transformers imports
# torchvision whenever it is importable, so these go into their own directory
# (--target, not the environment's site-packages): only the sweep's entry points put
# it on sys.path, through benchmarks/timm_sweep/tv_shim.py, which defines the missing
# operator schemas first. timm also needs pyyaml, huggingface_hub and safetensors
# (the last two are pinned above).
VISION_PACKAGES=("torchvision==0.28.0" "pillow==13.0.0" "timm==1.0.31" "pyyaml==6.0.3")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VISION_DIR=${TRNC_VISION_DEPS:-$ROOT/.vision-deps}  # tv_shim.py reads the same default

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
pip_missing() {
"$PYTHON" - "$@" <<'PY'
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
}
# The same for a --target directory ($1): its distributions only.
target_missing() {
"$PYTHON" - "$@" <<'PY'
import sys
from importlib import metadata
target, specs = sys.argv[1], sys.argv[2:]
found = {d.metadata["Name"].lower(): d.version for d in metadata.distributions(path=[target])}
print(" ".join(s for s in specs if found.get(s.split("==")[0].lower()) != s.split("==")[1]))
PY
}
need=$(pip_missing "${PIP_PACKAGES[@]}")
if [ -n "$need" ]; then
  echo "setup: installing Python packages: $need"
  # shellcheck disable=SC2086
  "$PYTHON" -m pip install -q $need
fi
# --no-deps groups: pinned closures that must never make pip resolve torch.
need=$(pip_missing "${HF_PACKAGES[@]}")
if [ -n "$need" ]; then
  echo "setup: installing Python packages (--no-deps): $need"
  # shellcheck disable=SC2086
  "$PYTHON" -m pip install -q --no-deps $need
fi
need=$(target_missing "$VISION_DIR" "${VISION_PACKAGES[@]}")
if [ -n "$need" ]; then
  echo "setup: installing the vision sweep's packages into $VISION_DIR (--no-deps): $need"
  # shellcheck disable=SC2086
  "$PYTHON" -m pip install -q --no-deps --upgrade --target "$VISION_DIR" $need
fi
if "$PYTHON" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torchvision') is None)"; then
  echo "setup: note: torchvision is installed in $PYTHON's environment (an older setup.sh put it" \
       "there): transformers' model modules then fail to import (operator torchvision::nms does" \
       "not exist) unless tv_shim.py runs first; 'pip uninstall torchvision timm' removes it" \
       "(the sweep uses $VISION_DIR)"
fi
echo "setup: ok"
