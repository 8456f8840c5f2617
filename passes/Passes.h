//===- Passes.h - trnc passes and pipelines -----------------------*- C++ -*-===//
#pragma once

#include "dialects/Nisa/NisaOps.h"
#include "dialects/Trn/TrnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

namespace trnc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

struct PipelineOptions {
  std::string target = "trn2";
};

/// The whole compiler from trn to scheduled nisa, as run by torch.compile:
/// canonicalize, tile/lower to nisa, allocate, schedule.
void buildCompilePipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers every pass and the `trnc-compile` pipeline with the global
/// registry (for trnc-opt).
void registerAllPasses();

} // namespace trnc
