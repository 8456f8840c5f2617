//===- IntegerRangeCheck.cpp - Prove integer arithmetic exact, or refuse --===//
//
// `trnc-trn-integer-range`: the engines compute integers in fp32, so an
// integer intermediate past 2^24 would be silently rounded (i * 1001 on
// 20001 gives 20021000, not 20021001). Over the trn graph, with the range
// analysis of IntegerRange.h:
//   - integer graph inputs unbounded (any int32): no problem -> nothing to
//     check at run time, the graph is exact for every input;
//   - otherwise the largest bound B <= 2^24 such that the graph is exact for
//     every integer input within [-B, B] (the analysis is monotone in B, so
//     a binary search over it). The inputs the problems depend on get that
//     bound, recorded on the module as `trn.integer_inputs` (the driver puts
//     it in the artifact's metadata; CompiledGraph checks every call, since
//     only the caller's values decide it);
//   - no B at all (a problem with every input zero: constants, float -> int
//     converts of unbounded floats): the graph is refused at the first
//     inexact op, naming it and the user's line.
// Checking input values at the call is a single max |x| per integer input on
// the host; checking intermediates on the device would need extra
// instructions in every program, for values the ranges already bound.
//
//===----------------------------------------------------------------------===//
#include "passes/IntegerRange.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace trnc {
#define GEN_PASS_DEF_INTEGERRANGE
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;

namespace {

constexpr double kLargestBound = kExactIntegerLimit;
constexpr double kUnbounded = 2147483647.0;

struct IntegerRangePass : public trnc::impl::IntegerRangeBase<IntegerRangePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IntegerRangeAnalysis::Problems unbounded =
        analyzeIntegerRanges(module, kUnbounded);
    if (unbounded.empty())
      return; // exact for every input
    IntegerRangeAnalysis::Problems atZero = analyzeIntegerRanges(module, 0);
    if (!atZero.empty()) {
      auto &[op, problem] = atZero.front();
      op->emitError(problem.message)
          .attachNote()
          << "no bound on the graph's inputs makes this exact (its integers "
             "come from constants, or from values the range analysis cannot "
             "bound, such as a division by a range holding 0); int64 "
             "arithmetic past 2^24 (e.g. wraparound hashes) is not supported";
      return signalPassFailure();
    }
    // Largest B with no problem: lo always passes, hi never does.
    double lo = 0, hi = kLargestBound + 1;
    if (analyzeIntegerRanges(module, kLargestBound).empty())
      lo = kLargestBound;
    while (hi - lo > 1) {
      double mid = std::floor((lo + hi) / 2);
      (analyzeIntegerRanges(module, mid).empty() ? lo : hi) = mid;
    }
    // What goes wrong just past the bound: the op the user gets named.
    IntegerRangeAnalysis::Problems past =
        analyzeIntegerRanges(module, std::min(hi, kUnbounded));
    if (past.empty())
      past = unbounded;
    auto &[limitOp, limit] = past.front();

    SmallVector<unsigned> inputs;
    for (auto &[op, problem] : unbounded)
      for (unsigned i : problem.inputs)
        if (!llvm::is_contained(inputs, i))
          inputs.push_back(i);
    llvm::sort(inputs);
    Builder b(module.getContext());
    SmallVector<Attribute> records;
    for (unsigned i : inputs)
      records.push_back(b.getDictionaryAttr({
          b.getNamedAttr("input", b.getI64IntegerAttr(i)),
          b.getNamedAttr("bound", b.getI64IntegerAttr(int64_t(lo))),
          b.getNamedAttr("reason", b.getStringAttr(limit.message)),
          b.getNamedAttr("loc", LocationAttr(limitOp->getLoc())),
      }));
    module->setAttr("trn.integer_inputs", b.getArrayAttr(records));
  }
};

} // namespace
