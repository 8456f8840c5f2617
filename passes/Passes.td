//===- Passes.td - trnc passes, by phase -------------------*- tablegen -*-===//
//
// Every pass of the compiler, named `trnc-<phase>-<name>` and grouped by
// phase. The registered pipeline `trnc-compile` (Pipelines.cpp) runs them in
// order; `trnc-opt --help` lists them all.
//
//===----------------------------------------------------------------------===//
#ifndef TRNC_PASSES
#define TRNC_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Trn: checks on the tensor graph
//===----------------------------------------------------------------------===//

def IntegerRange : Pass<"trnc-trn-integer-range", "::mlir::ModuleOp"> {
  let summary = "Prove integer arithmetic exact in fp32, bound the inputs, or refuse";
  let description = [{
    The engines compute integers in fp32: exact only up to 2^24. A range
    analysis (sparse forward dataflow, IntegerRange.h) bounds every tensor
    and finds integer ops whose results or engine-read operands can pass
    2^24. If the graph is exact for any integer inputs, nothing is added.
    Else, with B the largest bound up to 2^24 for which it is exact when
    every integer input lies in [-B, B], the module gets `trn.integer_inputs`,
    one dictionary (input, bound = B, reason, loc) per input involved, which
    the caller checks at run time. If even all-zero inputs leave an inexact op
    (its integers come from constants or unbounded float -> int converts),
    the pass fails naming that op at the user's line.

    ```mlir
    func.func @main(%i: tensor<8xi64>) -> tensor<8xi64> {
      %0 = trn.mul_scalar %i, 1.001000e+03 : tensor<8xi64>
      return %0 : tensor<8xi64>
    }
    ```
    gets an integer_inputs entry with `bound = 16760` for input 0
    (16760 * 1001 < 2^24 <= 16761 * 1001).
  }];
}

//===----------------------------------------------------------------------===//
// Group: which trn ops one tile loop computes
//===----------------------------------------------------------------------===//

def FormFusionGroups : Pass<"trnc-form-fusion-groups", "::mlir::func::FuncOp"> {
  let summary = "Wrap the trn ops computed together in trn.fusion_group regions";
  let description = [{
    Walks the function in program order and forms the groups the tile
    lowering computes as one loop each (IREE's dispatch-region formation is
    the model): row groups (a row space's elementwise ops, row reductions,
    sums over rows: a layer norm, a cross-entropy and their gradients),
    matmul epilogues (the elementwise consumers of a matmul's result), and
    elementwise groups (the ops of one shape connected by def-use or by a
    shared input, wherever they are in the function). A group is placed
    where the lowering computes it (an elementwise group at its first op,
    a matmul group at its matmul, a row group at its last op); trn ops are
    pure, so members move there, as do the views and small producers (an
    optimizer's per-step scalars) a group reads before their own place.
    Values read after a group are yielded; everything else stays on chip.

    Before:
    ```mlir
    %0 = trn.exp %x : tensor<128x512xf32>
    %1 = trn.tanh %0 : tensor<128x512xf32>
    return %1 : tensor<128x512xf32>
    ```
    After:
    ```mlir
    %0 = trn.fusion_group "elementwise" -> (tensor<128x512xf32>) {
      %1 = trn.exp %x : tensor<128x512xf32>
      %2 = trn.tanh %1 : tensor<128x512xf32>
      trn.yield %2 : tensor<128x512xf32>
    }
    return %0 : tensor<128x512xf32>
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "NeuronCore target whose limits apply (default: the module's nisa.target, else trn2)">,
  ];
}

//===----------------------------------------------------------------------===//
// Tile: trn (tensors) -> nisa (instructions on tiles)
//===----------------------------------------------------------------------===//

def LowerToNisa : Pass<"trnc-tile-lower-to-nisa", "::mlir::ModuleOp"> {
  let summary = "Tile trn ops into nisa instructions over SBUF/PSUM and HBM";
  let description = [{
    Rewrites each `func.func` of trn ops into a destination-passing function
    of nisa instructions: inputs and outputs become 1-D HBM memrefs (arg
    attributes `nisa.input`/`nisa.output` = index, `nisa.shape`,
    `nisa.strides`), intermediates live in HBM scratch (`nisa.dram_alloc`),
    views become access patterns instead of copies, and every computation is
    split into 128-partition tiles: matmul tiles with K <= 128, M <= 128,
    N <= 512 accumulating in PSUM. Where a lowering's tiles repeat (the same
    shapes, each HBM buffer a constant step further on), they are one
    `scf.for` over one iteration, its buffers walked through
    `nisa.hbm_window` (passes/Tile/TileLoops.h); `trnc-unroll-tile-loops`
    unrolls them.

    Before:
    ```mlir
    func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
      %0 = trn.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
      return %0 : tensor<8x4xf32>
    }
    ```
    After (abridged):
    ```mlir
    func.func @main(%a: memref<128xf32> {nisa.input = 0 : i64, ...},
                    %b: memref<64xf32> {nisa.input = 1 : i64, ...},
                    %c: memref<32xf32> {nisa.output = 0 : i64, ...}) {
      %s = nisa.alloc : !nisa.tile<sbuf, 16, 8, f32>
      nisa.dma_copy %s <0, [8, 1], [16, 8]>, %a <0, [1, 16], [16, 8]> ...
      nisa.matmul %p ..., %s ..., %m ...
      nisa.tensor_copy %o ..., %p ... on scalar ...
      nisa.dma_copy %c ..., %o ...
      return
    }
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "NeuronCore target whose limits apply (default: the module's nisa.target, else trn2)">,
    Option<"lnc", "lnc", "unsigned", /*default=*/"1",
           "Logical-core degree: a rank is `lnc` physical cores, so a collective's link span counts ranks per chip at that degree">,
  ];
  let dependentDialects = ["::trnc::nisa::NisaDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def UnrollTileLoops : Pass<"trnc-unroll-tile-loops", "::mlir::func::FuncOp"> {
  let summary = "Unroll the tile phase's loops into straight-line instructions";
  let description = [{
    The tile phase emits a group's tiles as `scf.for` loops over one
    iteration's instructions, the HBM buffers walked through
    `nisa.hbm_window`. This pass unrolls every such loop (innermost first;
    bounds must be constants) and folds each window into the access patterns
    of the instructions that use it: offset + index * step. Then it chooses
    the engines of the fusion groups' instructions the lowerings marked
    (`trnc.engine_group`, `trnc.engine_free`, `trnc.engine_barrier`;
    EngineBalance.h): a free instruction several engines can run goes where
    it would end first, tile after tile, which one body, emitted once,
    cannot. The marks are removed.

    Before:
    ```mlir
    scf.for %i = %c0 to %c2 step %c1 {
      %w = nisa.hbm_window %arg0[%i * 65536] : memref<131072xf32>
      %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
      nisa.dma_copy %t <0, [512, 1], [128, 512]>, %w <0, [512, 1], [128, 512]> ...
    }
    ```
    After:
    ```mlir
    %t0 = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t0 <0, ...>, %arg0 <0, [512, 1], [128, 512]> ...
    %t1 = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t1 <0, ...>, %arg0 <65536, [512, 1], [128, 512]> ...
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "NeuronCore target (default: the module's nisa.target, else trn2)">,
  ];
  let dependentDialects = ["::trnc::nisa::NisaDialect"];
}

//===----------------------------------------------------------------------===//
// Fuse: keep intermediates on chip
//===----------------------------------------------------------------------===//

def FuseTileLoops : Pass<"trnc-fuse-tile-loops", "::mlir::func::FuncOp"> {
  let summary = "Fuse a consumer group's tile loop into its producer's";
  let description = [{
    Each fusion group is lowered on its own: a group reading another's
    result walks its tiles in its own loop, after every tile of the
    producer's loop is stored. Where iteration i of the consumer reads only
    what iterations <= i + shift of the producer wrote (shift: how many
    iterations, at most `max-shift`, the producer's loop has beyond the
    consumer's), the consumer's body joins the producer's loop, after it:
    the producer's first `shift` iterations run before, then the
    instructions between the two loops that do not depend on the producer's
    later iterations (the consumer's resident operands and first tiles),
    then one loop of the producer's iteration k + shift and the consumer's
    k, then the instructions between that do (a row group's weight sums,
    stored after its loop), when the consumer does not depend on them. The
    consumer's load of tile i then follows the producer's
    store of it, in the same iteration, for `trnc-fuse-forward-stores` to
    hand over on chip.

    Before:
    ```mlir
    scf.for %i = %c0 to %c31 step %c1 {      // layer norm, rows 1..31
      %out = nisa.hbm_window %y[%i * 131072] : memref<4194304xbf16>
      ...
      nisa.dma_copy %out <131072, [1024, 1], [128, 1024]>, %normed ...
    }
    ...                                       // the matmul's weights, row 0
    scf.for %i = %c0 to %c31 step %c1 {      // the matmul, rows 1..31
      %in = nisa.hbm_window %y[%i * 131072] : memref<4194304xbf16>
      nisa.dma_copy %rows <0, [1024, 1], [128, 1024]>, %in <131072, [1024, 1], [128, 1024]> ...
      ...
    }
    ```
    After:
    ```mlir
    ...                                       // the matmul's weights, row 0
    scf.for %i = %c0 to %c31 step %c1 {
      ...                                     // layer norm of row tile i + 1
      ...                                     // the matmul of row tile i + 1
    }
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "NeuronCore target (default: the module's nisa.target, else trn2)">,
    Option<"maxShift", "max-shift", "int64_t", /*default=*/"2",
           "Most iterations a producer loop may have beyond its consumer's "
           "(they run ahead, before the fused loop)">,
    Option<"memoryShare", "memory-share", "double", /*default=*/"0.75",
           "Share of an SBUF partition a fused loop may hold at its peak: "
           "the tiles it uses from outside plus its iteration's own live at "
           "once (the list scheduler's share for live tiles)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def ForwardStores : Pass<"trnc-fuse-forward-stores", "::mlir::func::FuncOp"> {
  let summary = "Forward tiles stored to HBM to the loads that read them back";
  let description = [{
    Between two ops every tensor goes through HBM: a store of tile k, then a
    load of the same bytes by the next op. When a load reads exactly what
    one store wrote earlier in its block (same root buffer, windows and
    access pattern, same element types, both DMAs covering their whole
    tiles), the loaded tile is replaced by the stored one and the load is
    deleted; stores into scratch that nothing reads any more, and the
    scratch itself, are deleted too. It runs on the tile loops: in a fused
    loop's body the tile goes from producer to consumer within the
    iteration; a loop's first (last) iterations that load (store) what
    straight-line instructions before (after) it store (load) are peeled
    out of it first. A forward lengthens the stored tile's life from the
    store to the load, so it is taken only while live tiles stay within
    `memory-share` of SBUF / PSUM at every point of the program (each loop
    body counted once).

    Before:
    ```mlir
    nisa.activation exp %u ..., %t ...
    nisa.dma_copy %scratch <0, [512, 1], [128, 512]>, %u ...
    nisa.dma_copy %v <0, [512, 1], [128, 512]>, %scratch <0, [512, 1], [128, 512]>
    nisa.activation tanh %w ..., %v ...
    ```
    After:
    ```mlir
    nisa.activation exp %u ..., %t ...
    nisa.activation tanh %w ..., %u ...
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "NeuronCore target whose memory sizes apply (default: the module's nisa.target, else trn2)">,
    Option<"memoryShare", "memory-share", "double", /*default=*/"0.5",
           "Share of SBUF and of PSUM that live tiles may take after "
           "forwarding">,
  ];
}

//===----------------------------------------------------------------------===//
// Target: the one module attribute every pass and verifier reads
//===----------------------------------------------------------------------===//

def SetTarget : Pass<"trnc-set-target", "::mlir::ModuleOp"> {
  let summary = "Name the NeuronCore target of the module (nisa.target)";
  let description = [{
    Sets the module's `nisa.target` attribute (trn1, trn2, trn3), the first
    step of every pipeline. Passes take their machine model from it (a
    pass's own `target` option must agree), and verifiers their limits (an
    SBUF tile of 200 KiB per partition is valid on trn2 but not on trn1). A
    module that already names another target is an error.

    ```mlir
    module attributes {nisa.target = "trn1"} { ... }
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"trn2\"",
           "NeuronCore target (trn1, trn2, trn3)">,
  ];
}

//===----------------------------------------------------------------------===//
// Pipeline: the order of instructions, so that engines and DMA overlap
//===----------------------------------------------------------------------===//

def ListSchedule : Pass<"trnc-pipeline-list-schedule", "::mlir::func::FuncOp"> {
  let summary = "Reorder instructions so loads of later tiles overlap compute";
  let description = [{
    List scheduling of the unrolled instruction stream before allocation:
    over the true dependences (overlapping bytes; tiles are still their own
    buffers), with each engine in order and the DMA stream dispatching in
    order onto 16 queues, costed by the simulator's formulas. Each engine
    takes its lowest-index ready instruction; the engine that can start
    soonest goes next. A tile is live from its first to its last access in
    the new order, and an instruction that would push the tiles it hoists
    past `memory-share` of SBUF or PSUM waits: that bounds how far loads are
    hoisted (the prefetch depth). A transfer farther ahead than 75% of the
    memory could hold (program order makes more bytes live before it) may
    fill only half of that share, so the instructions in between still get
    tiles. Tiles get their addresses as the schedule
    first touches them (time-aware: bytes freed before the instruction
    starts are preferred, and it waits for those it takes), so the estimate
    includes the waits reuse adds. When the frontier's tiles find no gap
    (fragmentation), the schedule goes back to one of its last two
    `checkpoints` and redoes the stretch placing small tiles apart, then
    with half the share. The order and its addresses are kept only
    when estimated faster than program order (else a smaller share, else
    program order, placed by the allocator). `report` prints what was tried. Allocations move to the top of
    the body. Each `nisa.dram_alloc` gets `trnc.estimated_live`: when, in
    the kept order's estimated timeline, its first access starts and its
    last ends (ns), for trnc-pack-scratch.

    Before (tile 1's load waits behind tile 0's store in the DMA stream):
    ```mlir
    nisa.dma_copy %t0 ..., %in ...        // load 0
    nisa.activation exp %u0 ..., %t0 ...
    nisa.dma_copy %out ..., %u0 ...       // store 0 (waits for exp)
    nisa.dma_copy %t1 ..., %in ...        // load 1
    ...
    ```
    After:
    ```mlir
    nisa.dma_copy %t0 ..., %in ...        // load 0
    nisa.dma_copy %t1 ..., %in ...        // load 1, overlaps exp 0
    nisa.activation exp %u0 ..., %t0 ...
    nisa.dma_copy %out ..., %u0 ...
    ...
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "NeuronCore target whose costs and memory sizes apply (default: the module's nisa.target, else trn2)">,
    Option<"memoryShare", "memory-share", "double", /*default=*/"0.75",
           "Share of SBUF and of PSUM that live tiles may take while "
           "instructions are hoisted">,
    Option<"checkpoints", "checkpoints", "unsigned", /*default=*/"16",
           "Checkpoints per schedule (at least 64 instructions apart) that "
           "it goes back to when the frontier's tiles find no gap (0: none; "
           "the schedule then fails there and another is tried)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per function: the schedules tried, their "
           "estimates, and the one kept">,
  ];
}

def SplitLogicalCores : Pass<"trnc-pipeline-split-logical-cores", "::mlir::ModuleOp"> {
  let summary = "Split @main over the two physical cores of a logical core (LNC=2)";
  let description = [{
    Clones `@main` into `@main_core1` and keeps in each copy the
    instructions its physical core needs: the HBM transfers into a buffer
    are ranked by the first element they write, the first half go to core 0
    and the rest to core 1, and every instruction a core's transfers depend
    on through on-chip tiles is kept on that core (shared producers in both;
    an instruction nothing needs on core 0). Elementwise chains behind a
    single-transfer store, and on-chip instructions both cores would run,
    are cut in halves of their free elements when the halves land on
    different cores without a barrier more; single-transfer outputs move to
    core 1 while core 0 has more estimated work. A collective (one per
    logical core, its span lowered at lnc=2) is issued whole by core 0.
    Where an instruction touches HBM bytes the other core touched since the
    last barrier (a read after a write, a write after a read or write), a
    barrier goes just before it in both copies: `nisa.peer_signal` and
    `nisa.peer_wait`. The later passes run on each function, so scheduling,
    SBUF/PSUM allocation and semaphores are per core. Sets `trnc.lnc = 2` on
    the module, `trnc.core` on both functions and `trnc.scratch` (its index)
    on every `nisa.dram_alloc`, which the emitter maps to one shared region.

    A split that cannot beat one core is not made: when a lower bound of
    the split program (per core, its busiest engine's work, the DMA queues
    sharing the transfers, plus three times each barrier's fixed cost) is
    no less than that of the whole program on one core (both cores would
    repeat most of the work, e.g. load every weight of a convolution net
    split over its batch), every instruction stays on core 0 and
    `@main_core1` is empty.

    Before: a store of rows 0..127 and one of rows 128..255 of `%out`.
    After: one in `@main` (core 0), the other in `@main_core1`, each with
    the loads and compute it needs.
  }];
  let options = [
    Option<"alwaysSplit", "always-split", "bool", /*default=*/"false",
           "Split even when one core is estimated as fast (tests of the "
           "split's mechanics on small programs)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark on @main: the whole-program analyses run, the "
           "instructions both cores run that were cut, and those not tried "
           "because each half would be needed by the same cores">,
  ];
}

//===----------------------------------------------------------------------===//
// Allocate: addresses in SBUF and PSUM
//===----------------------------------------------------------------------===//

def Allocate : Pass<"trnc-allocate-memory", "::mlir::func::FuncOp"> {
  let summary = "Assign SBUF and PSUM addresses to tiles by liveness";
  let description = [{
    Computes each `nisa.alloc`'s live range over the instruction order and
    assigns it a byte `address` inside every partition: SBUF first fit,
    PSUM inside 2 KiB banks. When a tile cannot be placed, fails on that
    alloc with a note listing every live buffer (a memory map).

    Before: `%t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>`
    After:  `%t = nisa.alloc {address = 2048 : i64} : !nisa.tile<sbuf, 128, 512, f32>`
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "NeuronCore target whose memory sizes apply (default: the module's nisa.target, else trn2)">,
  ];
}

def PackScratch : Pass<"trnc-pack-scratch", "::mlir::ModuleOp"> {
  let summary = "Place HBM scratch buffers in one arena by liveness";
  let description = [{
    Gives every `nisa.dram_alloc` a byte `offset` in the program's scratch
    arena. A buffer is live from the first to the last instruction touching
    it (program order); buffers whose ranges are disjoint share bytes, first
    fit in order of first use, when the list scheduler's estimated timeline
    (`trnc.estimated_live` on each alloc, removed here) has the earlier
    buffer's last access end before the later one's first starts. The semaphore pass then orders the later
    buffer's accesses after the earlier one's, as it sees scratch at its
    arena bytes. At LNC=2 the two cores' functions share the arena: buffers
    used by both (or by different cores) share bytes only when a barrier
    separates them.

    Before: `%a = nisa.dram_alloc : memref<4096xf32>` and `%b` likewise,
    `%b` first written after `%a`'s last read.
    After:  `%a = nisa.dram_alloc {offset = 0 : i64}`, `%b = nisa.dram_alloc {offset = 0 : i64}`.
  }];
  let options = [
    Option<"reuseDistance", "reuse-distance", "int64_t", /*default=*/"64",
           "For a buffer the list scheduler gave no estimated timeline "
           "(trnc.estimated_live): instructions on one core between a buffer's last use "
           "and the first use of another given its bytes (the DMA stream issues in order: "
           "a wait for a transfer still in flight holds back every later one)">,
  ];
}

//===----------------------------------------------------------------------===//
// Schedule: per-engine streams and semaphores
//===----------------------------------------------------------------------===//

def Schedule : Pass<"trnc-schedule-semaphores", "::mlir::func::FuncOp"> {
  let summary = "Insert semaphore waits and signals for cross-engine hazards";
  let description = [{
    Each engine's instructions keep their program order. Ordering is between
    "ordered agents" (isa/Isa.h): the compute engines, which signal their
    engine id, and the 16 DMA queues, which complete out of order with each
    other and signal 5 + queue. An instruction that reads or writes bytes an
    earlier instruction of another agent wrote (or reads, for a write) waits
    until that agent's semaphore reaches the producer's position in the
    agent's order; DMAs on different queues wait for each other too. Only
    the latest needed wait per agent is kept. A DMA that conflicts with an
    earlier DMA goes on that DMA's queue (ordered for free); others are
    spread round-robin. Waits beyond 4 go on `nisa.nop`s placed just
    before the instruction on its engine.

    Before: `nisa.tensor_copy %o ..., %p ... on scalar : ...`
    After:  `nisa.tensor_copy %o ..., %p ... on scalar {signal = 2 : i64, waits = array<i64: 0, 3>} : ...`
  }];
}

#endif // TRNC_PASSES
