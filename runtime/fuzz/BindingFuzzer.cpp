//===- BindingFuzzer.cpp - libFuzzer target for the runtime/tensor boundary ===//
//
// The artifact fuzzer sizes every buffer from the artifact itself, so it can
// never see a caller whose tensors do not match (issue 12: another graph's
// artifact served from the cache read past a tensor). This target takes a
// valid seed program and derives from the input, per input/output, a buffer
// description that may differ from the region in dtype, shape, strides,
// storage bytes or count, then allocates exactly the described storage (so
// ASan sees a one-byte overrun) and asks checkBindings. Accepted bindings are
// run on the simulator, timed or untimed, under the race checker. A faithful
// binding that is refused is a finding (abort), as is any sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "artifact/Binding.h"
#include "fuzz/SeedPrograms.h"
#include "fuzz/Simulators.h"
#include "machine/MachineModel.h"
#include "sim/RaceChecker.h"
#include "sim/Simulator.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace trnc;

namespace {

constexpr uint64_t kMaxBufferBytes = 1 << 20;
const char *const kDTypes[] = {"f32", "bf16", "f16", "i32", "u8", "i64", "bool", "f64"};

const std::vector<Program> &seeds() {
  static const std::vector<Program> all = fuzz::seedPrograms();
  return all;
}

/// The region's own layout, then whatever the input says to change.
BufferView describe(const Region &r, FuzzedDataProvider &in, bool &faithful) {
  BufferView v;
  v.dtype = std::string(isa::dtypeName(r.dtype));
  v.shape = r.shape;
  v.strides = r.layoutStrides();
  v.bytesAvailable = r.bytes;
  uint8_t what = in.ConsumeIntegral<uint8_t>();
  if (what & 1) {
    v.dtype = kDTypes[in.ConsumeIntegralInRange<size_t>(0, std::size(kDTypes) - 1)];
  }
  if ((what & 2) && !v.shape.empty()) {
    size_t d = in.ConsumeIntegralInRange<size_t>(0, v.shape.size() - 1);
    v.shape[d] = in.ConsumeIntegralInRange<int64_t>(0, 2 * v.shape[d] + 2);
  }
  if ((what & 4) && !v.strides.empty()) {
    size_t d = in.ConsumeIntegralInRange<size_t>(0, v.strides.size() - 1);
    v.strides[d] = in.ConsumeIntegralInRange<int64_t>(0, 2 * v.strides[d] + 2);
  }
  if (what & 8) {
    v.shape.push_back(in.ConsumeIntegralInRange<int64_t>(0, 4));
    v.strides.push_back(in.ConsumeIntegralInRange<int64_t>(0, 4));
  }
  if (what & 16)
    v.bytesAvailable = in.ConsumeIntegralInRange<uint64_t>(0, 2 * r.bytes + 64);
  faithful = faithful && !(what & 31);
  v.bytesAvailable = std::min(v.bytesAvailable, kMaxBufferBytes);
  return v;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  const Program &p = seeds()[in.ConsumeIntegralInRange<size_t>(0, seeds().size() - 1)];
  bool faithful = true;
  std::vector<BufferView> views[2]; // inputs, outputs
  for (int k = 0; k < 2; ++k) {
    Region::Kind kind = k ? Region::Kind::Output : Region::Kind::Input;
    size_t n = k ? p.numOutputs() : p.numInputs();
    views[k].resize(n);
    for (const Region &r : p.regions)
      if (r.kind == kind)
        views[k][r.index] = describe(r, in, faithful);
    uint8_t count = in.ConsumeIntegral<uint8_t>();
    if (count & 0x80) { // one buffer too many or too few
      faithful = false;
      if ((count & 1) && !views[k].empty())
        views[k].pop_back();
      else
        views[k].push_back(views[k].empty() ? BufferView() : views[k].back());
    }
  }
  // Exactly the described storage, so ASan catches any access beyond it.
  std::vector<std::unique_ptr<uint8_t[]>> storage;
  std::vector<void *> ptrs[2];
  for (int k = 0; k < 2; ++k)
    for (BufferView &v : views[k]) {
      storage.emplace_back(v.bytesAvailable ? new uint8_t[v.bytesAvailable]() : nullptr);
      v.data = storage.back().get();
      ptrs[k].push_back(storage.back().get());
    }
  std::string why = checkBindings(p, views[0], views[1]);
  if (faithful && !why.empty()) {
    std::fprintf(stderr, "a faithful binding of seed '%s' was refused: %s\n", p.name.c_str(),
                 why.c_str());
    std::abort();
  }
  if (!why.empty())
    return 0;
  RaceChecker checker;
  RunOptions options;
  options.timed = in.ConsumeBool();
  options.observer = &checker;
  Profile profile;
  llvm::consumeError(fuzz::simulatorFor(p.target).run(p, ptrs[0], ptrs[1], options,
                                                options.timed ? &profile : nullptr));
  return 0;
}
