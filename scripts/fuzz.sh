#!/usr/bin/env bash
# Fuzz the runtime's trust boundaries: configure build-fuzz (TRNC_FUZZ=ON:
# runtime only, clang-19 with libFuzzer, ASan and UBSan), build the targets,
# write the seed corpus, and run each fuzzer:
#   trnc-artifact-fuzzer  artifact bytes -> loader/verifier -> timed or
#                         functional simulator
#   trnc-binding-fuzzer   valid programs fed caller buffers that may not match
#                         them (dtype, shape, strides, storage, count)
#   trnc-cache-fuzzer     forged cache entries (artifact + manifest bytes) looked
#                         up, and graph JSON canonicalised into cache keys
# Exits non-zero when a fuzzer finds a crash, a sanitizer report or a leak;
# the reproducer is left in build-fuzz/findings/.
# Usage: scripts/fuzz.sh [SECONDS] [RUNS]   SECONDS (default 30) is the total
# time, split between the fuzzers; with RUNS, each runs RUNS executions
# instead (no time limit), e.g. scripts/fuzz.sh 0 1000000.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-30}
RUNS=${2:-}
BUILD=build-fuzz
FUZZERS=(trnc-artifact-fuzzer trnc-binding-fuzzer trnc-cache-fuzzer)

if [ ! -f "$BUILD/build.ninja" ]; then
  CXX=clang++-19 CC=clang-19 cmake -G Ninja -S . -B "$BUILD" -DTRNC_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$BUILD" -j2 "${FUZZERS[@]}" trnc-fuzz-seeds >/dev/null

findings="$BUILD/findings"
mkdir -p "$findings"
per=$(( SECONDS_TO_RUN / ${#FUZZERS[@]} ))
[ "$per" -ge 5 ] || per=5
for fuzzer in "${FUZZERS[@]}"; do
  corpus="$BUILD/corpus/$fuzzer"
  mkdir -p "$corpus"
  # All start from the seed programs' artifacts (the binding and cache
  # fuzzers read them only as bytes that steer their choices).
  "$BUILD/runtime/fuzz/trnc-fuzz-seeds" "$corpus"
  if [ -n "$RUNS" ]; then limit=(-runs="$RUNS"); what="$RUNS executions"
  else limit=(-max_total_time="$per"); what="${per} s"; fi
  echo "== fuzz: $fuzzer for $what (corpus $corpus)"
  log="$BUILD/$fuzzer.log"
  # -rss_limit_mb guards the capped allocations; -max_len covers the seeds
  # with room to grow. The corpus grows across runs (it lives in build-fuzz).
  if ! "$BUILD/runtime/fuzz/$fuzzer" "$corpus" "${limit[@]}" -max_len=16384 \
      -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$findings/$fuzzer-" \
      -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: $fuzzer FAILED, reproducer(s) in $findings/:" >&2
    ls -1 "$findings" >&2
    exit 1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ *DONE" "$log" || true
done
echo "fuzz: ok, no findings"
