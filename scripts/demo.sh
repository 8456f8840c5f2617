#!/usr/bin/env bash
# The README's demo command: set up, build, then train a small model through
# torch.compile(backend="neuron") beside eager and print the comparison
# (python -m trnc.demo: a small GPT by default).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null
"$PYTHON" -m trnc.demo "$@"
