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
#   trnc-compile-fuzzer   graph JSON through the whole compiler (importer, MLIR
#                         pipeline, emitter, verifier); its own configuration,
#                         build-fuzz-compiler (TRNC_FUZZ_COMPILER: every trnc
#                         source instrumented), seeded from compiler/fuzz/seeds.
#                         Only with TRNC_FUZZ_COMPILER=1: its instrumented build
#                         takes 30-45 min on two cores, too long for the test
#                         command's smoke run.
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
COMPILER_BUILD=build-fuzz-compiler

if [ ! -f "$BUILD/build.ninja" ]; then
  CXX=clang++-19 CC=clang-19 cmake -G Ninja -S . -B "$BUILD" -DTRNC_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$BUILD" -j2 "${FUZZERS[@]}" trnc-fuzz-seeds >/dev/null
ALL=("${FUZZERS[@]}")
if [ "${TRNC_FUZZ_COMPILER:-0}" = 1 ]; then
  if [ ! -f "$COMPILER_BUILD/build.ninja" ]; then
    CXX=clang++-19 CC=clang-19 cmake -G Ninja -S . -B "$COMPILER_BUILD" \
      -DTRNC_FUZZ_COMPILER=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  ninja -C "$COMPILER_BUILD" -j2 trnc-compile-fuzzer >/dev/null
  ALL+=(trnc-compile-fuzzer)
fi

findings="$BUILD/findings"
mkdir -p "$findings"
per=$(( SECONDS_TO_RUN / ${#ALL[@]} ))
[ "$per" -ge 5 ] || per=5
for fuzzer in "${ALL[@]}"; do
  if [ "$fuzzer" = trnc-compile-fuzzer ]; then
    corpus="$COMPILER_BUILD/corpus/$fuzzer"
    binary="$COMPILER_BUILD/compiler/fuzz/$fuzzer"
    mkdir -p "$corpus"
    cp compiler/fuzz/seeds/*.json "$corpus/"  # real exported graphs
    # Debian's MLIR/LLVM are static and not instrumented: their inline
    # allocators never unpoison what our instrumented copies poison, nor
    # annotate containers. The conv seeds are 22 KB.
    asan=detect_container_overflow=0:allow_user_poisoning=0 max_len=32768
  else
    corpus="$BUILD/corpus/$fuzzer"
    binary="$BUILD/runtime/fuzz/$fuzzer"
    mkdir -p "$corpus"
    # All start from the seed programs' artifacts (the binding and cache
    # fuzzers read them only as bytes that steer their choices).
    "$BUILD/runtime/fuzz/trnc-fuzz-seeds" "$corpus"
    asan=${ASAN_OPTIONS:-} max_len=16384
  fi
  if [ -n "$RUNS" ]; then limit=(-runs="$RUNS"); what="$RUNS executions"
  else limit=(-max_total_time="$per"); what="${per} s"; fi
  echo "== fuzz: $fuzzer for $what (corpus $corpus)"
  log="$BUILD/$fuzzer.log"
  # -rss_limit_mb guards the capped allocations; -max_len covers the seeds
  # with room to grow. The corpus grows across runs (it lives in build-fuzz).
  if ! ASAN_OPTIONS=$asan "$binary" "$corpus" "${limit[@]}" -max_len="$max_len" \
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
