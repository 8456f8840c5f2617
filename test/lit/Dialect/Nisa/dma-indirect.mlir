// RUN: trnc-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// nisa.dma_gather / nisa.dma_scatter (Isa.h DmaIndirect): round trip, then
// one case per verifier rule.

// CHECK-LABEL: func.func @ok
// CHECK: nisa.dma_gather %{{.*}} <0, [64, 1], [128, 64]>, %{{.*}} <0, [64, 1], [1000, 64]>, %{{.*}} <0, [1, 1], [128, 1]> {queue = 3 : i64} :
// CHECK: nisa.dma_scatter %{{.*}} <0, [64, 1], [1000, 64]>, %{{.*}} <0, [64, 1], [128, 64]>, %{{.*}} <0, [1, 1], [128, 1]> accumulate :
// CHECK: nisa.dma_scatter %{{.*}} <0, [64, 1], [1000, 64]>, %{{.*}} <0, [64, 1], [128, 64]>, %{{.*}} <0, [1, 1], [128, 1]> :
// CHECK: nisa.dma_scatter %{{.*}} <0, [64, 1], [1000, 64]>, %{{.*}} <0, [64, 1], [128, 64]>, %{{.*}} <0, [1, 1], [128, 1]> idempotent :
func.func @ok(%table: memref<64000xf32>, %out: memref<64000xbf16>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, i32>
  nisa.dma_gather %t <0, [64, 1], [128, 64]>, %table <0, [64, 1], [1000, 64]>, %i <0, [1, 1], [128, 1]> {queue = 3} : !nisa.tile<sbuf, 128, 64, f32>, memref<64000xf32>, !nisa.tile<sbuf, 128, 1, i32>
  nisa.dma_scatter %out <0, [64, 1], [1000, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> accumulate : memref<64000xbf16>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  nisa.dma_scatter %out <0, [64, 1], [1000, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> : memref<64000xbf16>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  nisa.dma_scatter %out <0, [64, 1], [1000, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> idempotent : memref<64000xbf16>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  return
}

// -----

func.func @idempotent_accumulate(%out: memref<64000xf32>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, i32>
  // expected-error @+1 {{an accumulating scatter cannot be idempotent}}
  nisa.dma_scatter %out <0, [64, 1], [1000, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> accumulate idempotent : memref<64000xf32>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  return
}

// -----

func.func @index_dtype(%table: memref<64000xf32>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, f32>
  // expected-error @+1 {{index must be an SBUF i32 tile}}
  nisa.dma_gather %t <0, [64, 1], [128, 64]>, %table <0, [64, 1], [1000, 64]>, %i <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 64, f32>, memref<64000xf32>, !nisa.tile<sbuf, 128, 1, f32>
  return
}

// -----

func.func @index_shape(%table: memref<64000xf32>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, i32>
  // expected-error @+1 {{index must be [128, 1] (one per row), not [64, 1]}}
  nisa.dma_gather %t <0, [64, 1], [128, 64]>, %table <0, [64, 1], [1000, 64]>, %i <0, [1, 1], [64, 1]> : !nisa.tile<sbuf, 128, 64, f32>, memref<64000xf32>, !nisa.tile<sbuf, 128, 1, i32>
  return
}

// -----

func.func @table_rows_in_bounds(%table: memref<64000xf32>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, i32>
  // expected-error @+1 {{source pattern reaches element 64063 of an HBM buffer of 64000}}
  nisa.dma_gather %t <0, [64, 1], [128, 64]>, %table <0, [64, 1], [1001, 64]>, %i <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 64, f32>, memref<64000xf32>, !nisa.tile<sbuf, 128, 1, i32>
  return
}

// -----

func.func @row_width(%table: memref<64000xf32>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, i32>
  // expected-error @+1 {{a table row has 32 elements but the tile has 64 per partition}}
  nisa.dma_gather %t <0, [64, 1], [128, 64]>, %table <0, [64, 1], [1000, 32]>, %i <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 64, f32>, memref<64000xf32>, !nisa.tile<sbuf, 128, 1, i32>
  return
}

// -----

func.func @psum_rows(%table: memref<64000xf32>) {
  %t = nisa.alloc : !nisa.tile<psum, 128, 64, f32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, i32>
  // expected-error @+1 {{the row tile must be in SBUF}}
  nisa.dma_gather %t <0, [64, 1], [128, 64]>, %table <0, [64, 1], [1000, 64]>, %i <0, [1, 1], [128, 1]> : !nisa.tile<psum, 128, 64, f32>, memref<64000xf32>, !nisa.tile<sbuf, 128, 1, i32>
  return
}

// -----

func.func @i64_table(%table: memref<64000xi64>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, i32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, i32>
  // expected-error @+1 {{i64 rows are not supported (narrow with dma_copy)}}
  nisa.dma_gather %t <0, [64, 1], [128, 64]>, %table <0, [64, 1], [1000, 64]>, %i <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 64, i32>, memref<64000xi64>, !nisa.tile<sbuf, 128, 1, i32>
  return
}

// -----

func.func @queue(%out: memref<64000xf32>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>
  %i = nisa.alloc : !nisa.tile<sbuf, 128, 1, i32>
  // expected-error @+1 {{DMA queue must be in 0..15}}
  nisa.dma_scatter %out <0, [64, 1], [1000, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> {queue = 16} : memref<64000xf32>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  return
}
