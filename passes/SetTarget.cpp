//===- SetTarget.cpp - the module's nisa.target ---------------------------===//
//
// `trnc-set-target`: names the NeuronCore target on the module, once, so
// that every later pass and verifier reads the same one (TargetModel.h).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/TargetModel.h"

#include "mlir/IR/BuiltinOps.h"

namespace trnc {
#define GEN_PASS_DEF_SETTARGET
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;

namespace {

struct SetTargetPass : public trnc::impl::SetTargetBase<SetTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Checks the name, and that a target already set is the same one.
    if (!targetModel(module, target))
      return signalPassFailure();
    module->setAttr(nisa::NisaDialect::kTargetAttrName,
                    StringAttr::get(&getContext(), target));
  }
};

} // namespace
