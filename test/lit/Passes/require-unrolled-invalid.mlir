// The passes after the `unroll` phase refuse a tile loop left in their input
// (they see only the function's top-level instructions and would miss what
// is inside it), naming themselves and the pass that unrolls it.
// RUN: trnc-opt %s --trnc-pipeline-list-schedule -verify-diagnostics
// RUN: trnc-opt %s --trnc-allocate-memory -verify-diagnostics
// RUN: trnc-opt %s --trnc-pack-scratch -verify-diagnostics
// RUN: trnc-opt %s --trnc-schedule-semaphores -verify-diagnostics
// RUN: trnc-opt %s --trnc-pipeline-split-logical-cores -verify-diagnostics

func.func @main(%x: memref<4096xf32> {nisa.input = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-error-re @+1 {{is a tile loop; trnc-{{[a-z-]+}} works on instructions: run trnc-unroll-tile-loops first}}
  scf.for %i = %c0 to %c2 step %c1 {
    %w = nisa.hbm_window %x[%i * 16] : memref<4096xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 4, f32>
    nisa.dma_copy %t <0, [4, 1], [128, 4]>, %w <0, [1, 1], [128, 4]> : !nisa.tile<sbuf, 128, 4, f32>, memref<4096xf32>
  }
  return
}
