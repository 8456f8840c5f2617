//===- trnc-opt.cpp - run trnc dialects, passes and pipelines -------------===//
//
// The mlir-opt of this project: reproduces exactly what torch.compile ran
// (`--help` lists every pass and the registered pipelines).
//
//===----------------------------------------------------------------------===//
#include "dialects/Nisa/NisaOps.h"
#include "dialects/Trn/TrnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#ifdef TRNC_HAVE_PASSES
#include "passes/Passes.h"
#endif

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<trnc::trn::TrnDialect, trnc::nisa::NisaDialect,
                  mlir::func::FuncDialect, mlir::memref::MemRefDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
#ifdef TRNC_HAVE_PASSES
  trnc::registerAllPasses();
#endif
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "trnc optimizer driver\n", registry));
}
