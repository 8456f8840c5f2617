//===- ScanSemantics.cpp - tensor_scan on the Vector engine ---------------===//
//
// Inclusive scan of src0 along its innermost free dim with alu op0 (add,
// multiply, max or min): dst[.., i] = src0[.., 0] op ... op src0[.., i],
// restarting at every innermost row, accumulated in fp32. A carry across
// tiles is the lowering's job (one tensor_tensor with the previous row end).
//
//===----------------------------------------------------------------------===//
#include "sim/Exec.h"

#include <algorithm>

namespace trnc::sim {

namespace {
template <typename Fn>
void scanRows(ExecContext &ctx, const isa::Instruction &inst, Fn op) {
  View d = ctx.view(inst.dst), s = ctx.view(inst.src0);
  const uint64_t R = inst.src0.count[inst.src0.numDims - 1];
  const uint64_t P = s.partitions(), F = s.freeElements();
  float *buf = ctx.buf0.data();
  Walker wd(d, 1), ws(s, 1);
  for (uint64_t p = 0; p < P; ++p) {
    ws.setPartition(p);
    wd.setPartition(p);
    float acc = 0.0f;
    uint64_t pos = 0; // index within the current innermost row
    for (uint64_t left = F; left;) {
      size_t k = size_t(std::min<uint64_t>(left, kChunk));
      ws.load(buf, k);
      for (size_t i = 0; i < k; ++i) {
        acc = pos == 0 ? buf[i] : op(acc, buf[i]);
        buf[i] = acc;
        if (++pos == R)
          pos = 0;
      }
      wd.store(buf, k);
      left -= k;
    }
  }
}
} // namespace

void execTensorScan(ExecContext &ctx, const isa::Instruction &inst) {
  switch (isa::AluOp(inst.op0)) {
  case isa::AluOp::Multiply:
    return scanRows(ctx, inst, [](float a, float b) { return a * b; });
  case isa::AluOp::Max:
    return scanRows(ctx, inst, [](float a, float b) { return a > b ? a : b; });
  case isa::AluOp::Min:
    return scanRows(ctx, inst, [](float a, float b) { return a < b ? a : b; });
  default: // add (the verifier admits only these four)
    return scanRows(ctx, inst, [](float a, float b) { return a + b; });
  }
}

} // namespace trnc::sim
