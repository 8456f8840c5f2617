#!/usr/bin/env bash
# Fuzz the artifact loader: configure build-fuzz (TRNC_FUZZ=ON: runtime only,
# clang-19 with libFuzzer, ASan and UBSan), build the target, write the seed
# corpus, and fuzz for SECONDS (default 30). Exits non-zero when the fuzzer
# finds a crash, a sanitizer report or a leak; the reproducer is left in
# build-fuzz/findings/. Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-30}
BUILD=build-fuzz

if [ ! -f "$BUILD/build.ninja" ]; then
  CXX=clang++-19 CC=clang-19 cmake -G Ninja -S . -B "$BUILD" -DTRNC_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$BUILD" -j2 trnc-artifact-fuzzer trnc-fuzz-seeds >/dev/null

corpus="$BUILD/corpus"
findings="$BUILD/findings"
mkdir -p "$corpus" "$findings"
"$BUILD/runtime/fuzz/trnc-fuzz-seeds" "$corpus"

echo "== fuzz: trnc-artifact-fuzzer for ${SECONDS_TO_RUN} s (corpus $corpus)"
# -rss_limit_mb guards the capped allocations; -max_len covers the seeds
# with room to grow. The corpus grows across runs (it lives in build-fuzz).
if ! "$BUILD/runtime/fuzz/trnc-artifact-fuzzer" "$corpus" \
    -max_total_time="$SECONDS_TO_RUN" -max_len=16384 -rss_limit_mb=2048 \
    -timeout=10 -artifact_prefix="$findings/" -print_final_stats=1 \
    >"$BUILD/fuzz.log" 2>&1; then
  tail -n 60 "$BUILD/fuzz.log" >&2
  echo "fuzz: FAILED, reproducer(s) in $findings/:" >&2
  ls -1 "$findings" >&2
  exit 1
fi
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ *DONE" \
  "$BUILD/fuzz.log" || true
echo "fuzz: ok, no findings"
