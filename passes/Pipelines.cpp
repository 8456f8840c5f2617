//===- Pipelines.cpp - the trnc-compile pipeline and pass registration ----===//
//
// One pipeline from trn to scheduled nisa, built in C++ so that the driver
// (torch.compile, trnc-compile) and `trnc-opt --pass-pipeline=...` run
// exactly the same passes. canonicalize/cse are safe after lowering: every
// nisa.alloc result is a MemAlloc and every instruction declares MemRead /
// MemWrite effects, so neither pass erases or merges instructions.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace trnc {
namespace {

struct CompilePipelineOptions
    : public PassPipelineOptions<CompilePipelineOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("NeuronCore target (trn1, trn2, "
                                            "trn3)"),
                             llvm::cl::init("trn2")};
};

} // namespace

void buildCompilePipeline(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  LowerToNisaOptions lower;
  lower.target = options.target;
  pm.addPass(createLowerToNisa(lower));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  ForwardStoresOptions forward;
  forward.target = options.target;
  fpm.addPass(createForwardStores(forward));
  ListScheduleOptions listSchedule;
  listSchedule.target = options.target;
  fpm.addPass(createListSchedule(listSchedule));
  AllocateOptions allocate;
  allocate.target = options.target;
  fpm.addPass(createAllocate(allocate));
  fpm.addPass(createSchedule());
}

void registerAllPasses() {
  static bool registered = false;
  if (registered)
    return;
  registered = true;
  registerTrncPasses();
  PassPipelineRegistration<CompilePipelineOptions>(
      "trnc-compile",
      "The whole compiler, trn to scheduled nisa, as torch.compile runs it",
      [](OpPassManager &pm, const CompilePipelineOptions &opts) {
        PipelineOptions options;
        options.target = opts.target;
        buildCompilePipeline(pm, options);
      });
}

} // namespace trnc
