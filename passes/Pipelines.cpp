//===- Pipelines.cpp - the trnc-compile pipeline and pass registration ----===//
//
// One pipeline from trn to scheduled nisa, built in C++ so that the driver
// (torch.compile, trnc-compile) and `trnc-opt --pass-pipeline=...` run
// exactly the same passes. canonicalize/cse are safe after lowering: every
// nisa.alloc result is a MemAlloc and every instruction declares MemRead /
// MemWrite effects, so neither pass erases or merges instructions.
// `trnc-compile-kernel` is the tail of it (pipeline, allocate, schedule) for
// kernels written at the instruction level (trnc.nki).
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
  Option<CompilePhase> compileTo{
      *this, "compile-to", llvm::cl::desc("Stop after this phase"),
      llvm::cl::init(CompilePhase::Schedule),
      llvm::cl::values(
          clEnumValN(CompilePhase::Group, "group",
                     "trn ops computed together in trn.fusion_group regions"),
          clEnumValN(CompilePhase::Tile, "tile",
                     "trn -> nisa instructions over tiles, a group at a time "
                     "(elementwise groups as scf.for loops)"),
          clEnumValN(CompilePhase::Fuse, "fuse",
                     "a consumer group's tile loop joined to its producer's, "
                     "tiles handed from op to op on chip"),
          clEnumValN(CompilePhase::Unroll, "unroll",
                     "the tile loops unrolled, their engines chosen"),
          clEnumValN(CompilePhase::Pipeline, "pipeline",
                     "instruction order and engines"),
          clEnumValN(CompilePhase::Allocate, "allocate",
                     "SBUF/PSUM addresses"),
          clEnumValN(CompilePhase::Schedule, "schedule",
                     "semaphores: the whole compiler (default)"))};
  Option<unsigned> lnc{*this, "lnc",
                       llvm::cl::desc("Logical-core degree: 2 splits the "
                                      "program over two physical cores"),
                       llvm::cl::init(1)};
};

struct KernelPipelineCLOptions
    : public PassPipelineOptions<KernelPipelineCLOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("NeuronCore target (trn1, trn2, "
                                            "trn3)"),
                             llvm::cl::init("trn2")};
  Option<bool> listSchedule{
      *this, "list-schedule",
      llvm::cl::desc("Reorder independent instructions (false: keep the "
                     "kernel's program order)"),
      llvm::cl::init(true)};
};

} // namespace

/// The module's nisa.target, which every later pass reads (TargetModel.h).
static void addSetTarget(OpPassManager &pm, const std::string &target) {
  SetTargetOptions set;
  set.target = target;
  pm.addPass(createSetTarget(set));
}

void buildKernelPipeline(OpPassManager &pm,
                         const KernelPipelineOptions &options) {
  addSetTarget(pm, options.target);
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  if (options.listSchedule)
    fpm.addPass(createListSchedule());
  fpm.addPass(createAllocate());
  pm.addPass(createPackScratch());
  pm.nest<func::FuncOp>().addPass(createSchedule());
}

void buildCompilePipeline(OpPassManager &pm, const PipelineOptions &options) {
  auto wanted = [&](CompilePhase phase) { return phase <= options.compileTo; };
  addSetTarget(pm, options.target);
  // trn: canonicalize and merge repeated pure ops (every trn op is pure;
  // random draws differ by their seed operand).
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Integer arithmetic exact in fp32, or bounded inputs, or refused.
  pm.addPass(createIntegerRange());
  // group: the ops each tile loop computes, as trn.fusion_group regions.
  pm.nest<func::FuncOp>().addPass(createFormFusionGroups());
  if (!wanted(CompilePhase::Tile))
    return;
  // tile: trn -> nisa instructions over tiles (a group at a time).
  LowerToNisaOptions lower;
  lower.lnc = options.lnc; // a collective's ranks are logical cores
  pm.addPass(createLowerToNisa(lower));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // fuse: a consumer group's tile loop joins its producer's where the two
  // walk the tensor alike, and in the fused iteration (or between
  // straight-line instructions) a tile one group stored and the next loads
  // back is handed over on chip.
  if (wanted(CompilePhase::Fuse)) {
    pm.nest<func::FuncOp>().addPass(createFuseTileLoops());
    pm.nest<func::FuncOp>().addPass(createForwardStores());
  }
  // unroll: the tile loops become the instruction stream the later phases
  // order, allocate and synchronise.
  if (wanted(CompilePhase::Unroll))
    pm.nest<func::FuncOp>().addPass(createUnrollTileLoops());
  // LNC=2: @main and @main_core1, one per physical core; each later pass
  // runs on each core's function.
  if (options.lnc == 2 && wanted(CompilePhase::Pipeline))
    pm.addPass(createSplitLogicalCores());
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // pipeline: the order (and engines) that overlap DMA with compute.
  if (wanted(CompilePhase::Pipeline))
    fpm.addPass(createListSchedule());
  // allocate: SBUF/PSUM addresses by liveness over that order (spilling
  // to HBM where a tile does not fit), then HBM scratch offsets.
  if (!wanted(CompilePhase::Allocate))
    return;
  fpm.addPass(createAllocate());
  pm.addPass(createPackScratch());
  // schedule: semaphores between the per-engine streams.
  if (wanted(CompilePhase::Schedule))
    pm.nest<func::FuncOp>().addPass(createSchedule());
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
        options.compileTo = opts.compileTo;
        options.lnc = opts.lnc;
        buildCompilePipeline(pm, options);
      });
  PassPipelineRegistration<KernelPipelineCLOptions>(
      "trnc-compile-kernel",
      "A hand-written nisa kernel (trnc.nki) to scheduled nisa: list "
      "schedule, allocate, semaphores",
      [](OpPassManager &pm, const KernelPipelineCLOptions &opts) {
        KernelPipelineOptions options;
        options.target = opts.target;
        options.listSchedule = opts.listSchedule;
        buildKernelPipeline(pm, options);
      });
}

} // namespace trnc
