// RUN: trnc-opt %s -split-input-file --trnc-unroll-tile-loops -verify-diagnostics
// What trnc-unroll-tile-loops refuses: a loop it cannot count out.

func.func @unknown_trips(%x: memref<4096xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{a tile loop needs constant bounds and a positive step}}
  scf.for %i = %c0 to %n step %c1 {
    %w = nisa.hbm_window %x[%i * 16] : memref<4096xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 4, f32>
    nisa.dma_copy %t <0, [4, 1], [128, 4]>, %w <0, [1, 1], [128, 4]> : !nisa.tile<sbuf, 128, 4, f32>, memref<4096xf32>
  }
  return
}

// -----

func.func @window_outside_loop(%x: memref<4096xf32>, %i: index) {
  // expected-error @+1 {{index is not a constant after unrolling}}
  %w = nisa.hbm_window %x[%i * 16] : memref<4096xf32>
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 4, f32>
  nisa.dma_copy %t <0, [4, 1], [128, 4]>, %w <0, [1, 1], [128, 4]> : !nisa.tile<sbuf, 128, 4, f32>, memref<4096xf32>
  return
}

