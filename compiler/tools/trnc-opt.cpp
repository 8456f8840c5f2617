//===- trnc-opt.cpp - run trnc dialects, passes and pipelines -------------===//
//
// The mlir-opt of this project: reproduces exactly what torch.compile ran
// (`--help` lists every pass and the registered pipelines). The options LLVM
// itself registers before main (codegen, target and debug flags, unrelated
// to IR tools) are hidden: `--help-hidden` still lists them.
//
//===----------------------------------------------------------------------===//
#include "dialects/Nisa/NisaOps.h"
#include "dialects/Trn/TrnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"

#ifdef TRNC_HAVE_PASSES
#include "passes/Passes.h"
#endif

namespace {

/// Hide every option registered so far (by LLVM's static initialisers: none
/// is MLIR's or trnc's, which register on demand) except the generic ones.
void hideLLVMOwnOptions() {
  static const llvm::StringSet<> kept = {"help", "help-list", "help-hidden", "help-list-hidden",
                                         "version", "print-options", "print-all-options"};
  for (auto &entry : llvm::cl::getRegisteredOptions())
    if (!kept.contains(entry.getKey()))
      entry.getValue()->setHiddenFlag(llvm::cl::Hidden);
}

} // namespace

int main(int argc, char **argv) {
  hideLLVMOwnOptions();
  mlir::DialectRegistry registry;
  registry.insert<trnc::trn::TrnDialect, trnc::nisa::NisaDialect,
                  mlir::func::FuncDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect, mlir::arith::ArithDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
#ifdef TRNC_HAVE_PASSES
  trnc::registerAllPasses();
#endif
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "trnc optimizer driver\n", registry));
}
