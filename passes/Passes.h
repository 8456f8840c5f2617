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

/// On a nisa.dram_alloc, set by the list scheduler and consumed (removed)
/// by trnc-pack-scratch: [start, end] in ns of the buffer's first and last
/// access in the scheduler's estimated timeline.
constexpr llvm::StringLiteral kEstimatedLiveAttr = "trnc.estimated_live";

/// The passes after `unroll` work on straight-line instructions: an error on
/// the first tile loop (scf.for) or window left in `root`, naming `pass`
/// and the pass that unrolls them (trnc-unroll-tile-loops).
mlir::LogicalResult requireUnrolled(mlir::Operation *root, llvm::StringRef pass);

/// The phases of the compiler, in order.
enum class CompilePhase {
  Group,    // trn ops computed together wrapped in trn.fusion_group regions
  Tile,     // trn -> nisa instructions over tiles, a group at a time
  Fuse,     // a consumer's tile loop joined to its producer's, and tiles
            // stored and loaded back handed over on chip
  Unroll,   // the tile loops unrolled, their engines chosen
  Pipeline, // instruction order and engines, so DMA overlaps compute
  Allocate, // SBUF/PSUM addresses by liveness
  Schedule, // semaphores between the per-engine streams (the artifact's form)
};

struct PipelineOptions {
  std::string target = "trn2";
  /// The last phase to run; an artifact needs Schedule.
  CompilePhase compileTo = CompilePhase::Schedule;
  /// Logical-core degree: 2 splits the program over two physical cores
  /// (trnc-pipeline-split-logical-cores, before the list scheduler).
  unsigned lnc = 1;
};

/// The compiler from trn to scheduled nisa, as run by torch.compile, up to
/// and including phase `options.compileTo`.
void buildCompilePipeline(mlir::OpPassManager &pm,
                          const PipelineOptions &options);

/// Hand-written kernels (trnc.nki) arrive as nisa instructions already:
/// `trnc-compile-kernel` runs only the phases after tiling on them.
struct KernelPipelineOptions {
  std::string target = "trn2";
  /// Reorder independent instructions (trnc-pipeline-list-schedule), as the
  /// NKI compiler schedules a kernel; false keeps the kernel's program order.
  bool listSchedule = true;
};

/// Pipeline, allocate and schedule a function of nisa instructions whose
/// tiles have no addresses yet (the trnc.nki tracer's output).
void buildKernelPipeline(mlir::OpPassManager &pm,
                         const KernelPipelineOptions &options);

/// Registers every pass and the `trnc-compile` pipeline with the global
/// registry (for trnc-opt).
void registerAllPasses();

} // namespace trnc
