// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa=lnc=2 | FileCheck %s --check-prefix=LNC2
// trn.gather_rows / trn.scatter_rows -> dma_indirect (LowerIndirect.cpp).

// Gather of 5 rows of a 10 x 6 table: the int64 index is narrowed into an
// i32 [5, 1] tile by its load, one dma_gather spans all 10 table rows, then
// the rows go to the output.
// CHECK-LABEL: func.func @gather
// CHECK: %[[I:.*]] = nisa.alloc : <sbuf, 128, 1, i32>
// CHECK: nisa.dma_copy %[[I]] <0, [1, 1], [5, 1]>, %arg1 <0, [1, 1], [5, 1]> : !nisa.tile<sbuf, 128, 1, i32>, memref<5xi64>
// CHECK: %[[R:.*]] = nisa.alloc : <sbuf, 128, 2048, f32>
// CHECK: nisa.dma_gather %[[R]] <0, [2048, 1], [5, 6]>, %arg0 <0, [6, 1], [10, 6]>, %[[I]] <0, [1, 1], [5, 1]>
// CHECK: nisa.dma_copy %arg2 <0, [6, 1], [5, 6]>, %[[R]] <0, [2048, 1], [5, 6]>
// CHECK-NEXT: return
func.func @gather(%t: tensor<10x6xf32>, %i: tensor<5xi64>) -> tensor<5x6xf32> {
  %g = trn.gather_rows %t, %i : tensor<10x6xf32>, tensor<5xi64> -> tensor<5x6xf32>
  return %g : tensor<5x6xf32>
}

// 200 indices: two blocks (128 + 72 rows), each with its own index tile.
// CHECK-LABEL: func.func @gather_blocks
// CHECK: nisa.dma_copy %{{.*}} <0, [1, 1], [128, 1]>, %arg1 <0, [1, 1], [128, 1]>
// CHECK: nisa.dma_gather %{{.*}} <0, [2048, 1], [128, 4]>, %arg0 <0, [4, 1], [10, 4]>
// CHECK: nisa.dma_copy %arg2 <0, [4, 1], [128, 4]>
// CHECK: nisa.dma_copy %{{.*}} <0, [1, 1], [72, 1]>, %arg1 <128, [1, 1], [72, 1]>
// CHECK: nisa.dma_gather %{{.*}} <0, [2048, 1], [72, 4]>, %arg0 <0, [4, 1], [10, 4]>
// CHECK: nisa.dma_copy %arg2 <512, [4, 1], [72, 4]>
func.func @gather_blocks(%t: tensor<10x4xf32>, %i: tensor<200xi32>) -> tensor<200x4xf32> {
  %g = trn.gather_rows %t, %i : tensor<10x4xf32>, tensor<200xi32> -> tensor<200x4xf32>
  return %g : tensor<200x4xf32>
}

// Scatter: base is copied into the output first (HBM to HBM), then the src
// rows are loaded and scattered over the whole table (all 10 rows).
// CHECK-LABEL: func.func @scatter
// CHECK: nisa.dma_copy %arg3 {{.*}}, %arg0 {{.*}} : memref<60xf32>, memref<60xf32>
// CHECK: nisa.dma_copy %{{.*}} <0, [1, 1], [4, 1]>, %arg1 <0, [1, 1], [4, 1]>
// CHECK: nisa.dma_copy %[[S:.*]] <0, [2048, 1], [4, 6]>, %arg2 <0, [6, 1], [4, 6]>
// CHECK: nisa.dma_scatter %arg3 <0, [6, 1], [10, 6]>, %[[S]] <0, [2048, 1], [4, 6]>, %{{.*}} <0, [1, 1], [4, 1]> accumulate
// CHECK-NEXT: return
func.func @scatter(%b: tensor<10x6xf32>, %i: tensor<4xi64>, %s: tensor<4x6xf32>) -> tensor<10x6xf32> {
  %r = trn.scatter_rows %b, %i, %s accumulate : tensor<10x6xf32>, tensor<4xi64>, tensor<4x6xf32> -> tensor<10x6xf32>
  return %r : tensor<10x6xf32>
}

// A bf16 accumulate of no more indices than rows sums only the touched
// rows in fp32: result = base; S[i] = base[i] (gather, scatter); S[i] +=
// src in index order; the sums gathered back, rounded on chip and
// scattered into the result (duplicates write the same row: both row
// copies are idempotent scatters).
// CHECK-LABEL: func.func @scatter_bf16
// CHECK: nisa.dma_copy %arg3 {{.*}}, %arg0 {{.*}} : memref<60xbf16>, memref<60xbf16>
// CHECK: %[[A:.*]] = nisa.dram_alloc : memref<60xf32>
// CHECK: nisa.dma_copy %[[I:.*]] <0, [1, 1], [4, 1]>, %arg1
// CHECK: nisa.dma_gather %[[B:.*]] <0, [2048, 1], [4, 6]>, %arg0 <0, [6, 1], [10, 6]>, %[[I]]
// CHECK: nisa.dma_scatter %[[A]] <0, [6, 1], [10, 6]>, %[[B]] <0, [2048, 1], [4, 6]>, %[[I]] <0, [1, 1], [4, 1]> idempotent : memref<60xf32>
// CHECK: nisa.dma_copy %[[S:.*]] <0, [2048, 1], [4, 6]>, %arg2
// CHECK: nisa.dma_scatter %[[A]] <0, [6, 1], [10, 6]>, %[[S]] <0, [2048, 1], [4, 6]>, %[[I]] <0, [1, 1], [4, 1]> accumulate
// CHECK: nisa.dma_gather %[[F:.*]] <0, [2048, 1], [4, 6]>, %[[A]] <0, [6, 1], [10, 6]>, %[[I]] {{.*}} : <sbuf, 128, 2048, f32>
// CHECK: nisa.tensor_copy %[[R:.*]] <0, [2048, 1], [4, 6]>, %[[F]] <0, [2048, 1], [4, 6]> on vector : <sbuf, 128, 2048, bf16>, <sbuf, 128, 2048, f32>
// CHECK: nisa.dma_scatter %arg3 <0, [6, 1], [10, 6]>, %[[R]] <0, [2048, 1], [4, 6]>, %[[I]] <0, [1, 1], [4, 1]> idempotent : memref<60xbf16>
// CHECK-NEXT: return
func.func @scatter_bf16(%b: tensor<10x6xbf16>, %i: tensor<4xi32>, %s: tensor<4x6xbf16>) -> tensor<10x6xbf16> {
  %r = trn.scatter_rows %b, %i, %s accumulate : tensor<10x6xbf16>, tensor<4xi32>, tensor<4x6xbf16> -> tensor<10x6xbf16>
  return %r : tensor<10x6xbf16>
}

// Three blocks (128 + 128 + 4 indices): the src rows of the sums and the
// fp32 rows gathered back each take two tiles in turn (the third block's
// load reuses the first's tile, so loads run one ahead of the scatters).
// CHECK-LABEL: func.func @scatter_bf16_blocks
// CHECK: nisa.dma_copy %[[S0:.*]] <0, [2048, 1], [128, 6]>, %arg2 <0,
// CHECK: nisa.dma_copy %[[S1:.*]] <0, [2048, 1], [128, 6]>, %arg2 <768,
// CHECK-NOT: nisa.alloc
// CHECK: nisa.dma_copy %[[S0]] <0, [2048, 1], [4, 6]>, %arg2 <1536,
// CHECK: nisa.dma_gather %[[G0:.*]] <0, [2048, 1], [128, 6]>, %[[A:.*]] <0, [6, 1], [300, 6]>
// CHECK: nisa.dma_gather %[[G1:.*]] <0, [2048, 1], [128, 6]>, %[[A]]
// CHECK: nisa.dma_gather %[[G0]] <0, [2048, 1], [4, 6]>, %[[A]]
func.func @scatter_bf16_blocks(%b: tensor<300x6xbf16>, %i: tensor<260xi32>, %s: tensor<260x6xbf16>) -> tensor<300x6xbf16> {
  %r = trn.scatter_rows %b, %i, %s accumulate : tensor<300x6xbf16>, tensor<260xi32>, tensor<260x6xbf16> -> tensor<300x6xbf16>
  return %r : tensor<300x6xbf16>
}

// Four whole blocks of 128 indices, a row in one chunk: the sums of the
// touched rows are the first block, then a tile loop over the other three,
// its index and src windows moving a block (128 indices, 128 rows of 6)
// per iteration, for `fuse` to join to the loop computing src. At lnc=2
// the blocks stay straight-line (LowerIndirect.cpp, addTouchedRows).
// CHECK-LABEL: func.func @scatter_bf16_block_loop
// CHECK: nisa.dma_scatter %[[A:[0-9]+]] {{.*}} : memref<3600xf32>
// CHECK: nisa.dma_scatter %[[A]] <0, [6, 1], [600, 6]>, %{{.*}} <0, [2048, 1], [128, 6]>, %{{.*}} <0, [1, 1], [128, 1]> accumulate
// CHECK: scf.for %{{.*}} = %c0 to %c3
// CHECK-NEXT: %[[IW:[0-9]+]] = nisa.hbm_window %arg1[%{{.*}} * 128] : memref<512xi32>
// CHECK-NEXT: %[[SW:[0-9]+]] = nisa.hbm_window %arg2[%{{.*}} * 768] : memref<3072xbf16>
// CHECK: nisa.dma_copy %[[I:[0-9]+]] <0, [1, 1], [128, 1]>, %[[IW]] <128, [1, 1], [128, 1]>
// CHECK: nisa.dma_copy %[[S:[0-9]+]] <0, [2048, 1], [128, 6]>, %[[SW]] <768, [6, 1], [128, 6]>
// CHECK: nisa.dma_scatter %[[A]] <0, [6, 1], [600, 6]>, %[[S]] <0, [2048, 1], [128, 6]>, %[[I]] <0, [1, 1], [128, 1]> accumulate
// CHECK-NEXT: }
// CHECK: nisa.dma_gather
// LNC2-LABEL: func.func @scatter_bf16_block_loop
// LNC2-NOT: scf.for
// LNC2: return
func.func @scatter_bf16_block_loop(%b: tensor<600x6xbf16>, %i: tensor<512xi32>, %s: tensor<512x6xbf16>) -> tensor<600x6xbf16> {
  %r = trn.scatter_rows %b, %i, %s accumulate : tensor<600x6xbf16>, tensor<512xi32>, tensor<512x6xbf16> -> tensor<600x6xbf16>
  return %r : tensor<600x6xbf16>
}

// The matmul making base, read only by the scatter, stores straight into
// the scatter's output (LowerToNisa): no copy of base, and the start rows
// are gathered from there, right after the matmul's store rather than
// after src's exp (they read only base and index).
// CHECK-LABEL: func.func @scatter_bf16_base_in_place
// CHECK: nisa.matmul
// CHECK: nisa.tensor_copy %[[X:.*]] <0, [6, 1], [10, 6]>, %{{.*}} on scalar
// CHECK-NEXT: nisa.dma_copy %arg4 <0, [6, 1], [10, 6]>, %[[X]]
// CHECK-NOT: nisa.dma_copy %arg4
// CHECK: nisa.dma_gather %{{.*}}, %arg4 <0, [6, 1], [10, 6]>
// CHECK: nisa.dma_scatter %{{.*}} : memref<60xf32>
// CHECK: nisa.activation exp
// CHECK: nisa.dma_scatter {{.*}} accumulate
// CHECK-NOT: nisa.dma_copy %arg4
// CHECK: return
func.func @scatter_bf16_base_in_place(%a: tensor<10x8xbf16>, %w: tensor<8x6xbf16>, %i: tensor<4xi32>, %s: tensor<4x6xbf16>) -> tensor<10x6xbf16> {
  %x = trn.matmul %a, %w : (tensor<10x8xbf16>, tensor<8x6xbf16>) -> tensor<10x6xbf16>
  %e = trn.exp %s : tensor<4x6xbf16>
  %r = trn.scatter_rows %x, %i, %e accumulate : tensor<10x6xbf16>, tensor<4xi32>, tensor<4x6xbf16> -> tensor<10x6xbf16>
  return %r : tensor<10x6xbf16>
}

// base and index are graph inputs: the start (result = base, the touched
// rows into fp32) leads the program, ahead of src's computation.
// CHECK-LABEL: func.func @scatter_bf16_start_first
// CHECK-NOT: nisa.activation
// CHECK: nisa.dma_copy %arg3 {{.*}}, %arg0 {{.*}} : memref<60xbf16>, memref<60xbf16>
// CHECK: nisa.dma_gather %{{.*}}, %arg0 <0, [6, 1], [10, 6]>
// CHECK: nisa.dma_scatter %{{.*}} : memref<60xf32>
// CHECK: nisa.activation exp
// CHECK: nisa.dma_scatter {{.*}} accumulate
func.func @scatter_bf16_start_first(%b: tensor<10x6xbf16>, %i: tensor<4xi32>, %s: tensor<4x6xbf16>) -> tensor<10x6xbf16> {
  %e = trn.exp %s : tensor<4x6xbf16>
  %r = trn.scatter_rows %b, %i, %e accumulate : tensor<10x6xbf16>, tensor<4xi32>, tensor<4x6xbf16> -> tensor<10x6xbf16>
  return %r : tensor<10x6xbf16>
}

// A base read elsewhere too (here also returned) is not computed into
// the scatter's output: the scatter copies it.
// CHECK-LABEL: func.func @scatter_bf16_base_read_twice
// CHECK: nisa.dma_copy %arg5 {{.*}}, %[[X:.*]] {{.*}} : memref<60xbf16>, !nisa.tile
// CHECK: nisa.dma_copy %arg4 {{.*}}, %arg5 {{.*}} : memref<60xbf16>, memref<60xbf16>
// CHECK: nisa.dma_gather %{{.*}}, %arg5 <0, [6, 1], [10, 6]>
func.func @scatter_bf16_base_read_twice(%a: tensor<10x8xbf16>, %w: tensor<8x6xbf16>, %i: tensor<4xi32>, %s: tensor<4x6xbf16>) -> (tensor<10x6xbf16>, tensor<10x6xbf16>) {
  %x = trn.matmul %a, %w : (tensor<10x8xbf16>, tensor<8x6xbf16>) -> tensor<10x6xbf16>
  %r = trn.scatter_rows %x, %i, %s accumulate : tensor<10x6xbf16>, tensor<4xi32>, tensor<4x6xbf16> -> tensor<10x6xbf16>
  return %r, %x : tensor<10x6xbf16>, tensor<10x6xbf16>
}

// More indices than rows: the whole table goes through an fp32 copy of
// base, rounded once at the end.
// CHECK-LABEL: func.func @scatter_bf16_more_indices_than_rows
// CHECK: %[[A:.*]] = nisa.dram_alloc : memref<18xf32>
// CHECK: nisa.dma_copy %[[A]]
// CHECK: nisa.dma_scatter %[[A]] <0, [6, 1], [3, 6]>, %{{.*}} <0, [2048, 1], [4, 6]>, %{{.*}} accumulate : memref<18xf32>, <sbuf, 128, 2048, bf16>
// CHECK: nisa.dma_copy %{{.*}}, %[[A]]
// CHECK: nisa.dma_copy %arg3
// CHECK-NEXT: return
func.func @scatter_bf16_more_indices_than_rows(%b: tensor<3x6xbf16>, %i: tensor<4xi32>, %s: tensor<4x6xbf16>) -> tensor<3x6xbf16> {
  %r = trn.scatter_rows %b, %i, %s accumulate : tensor<3x6xbf16>, tensor<4xi32>, tensor<4x6xbf16> -> tensor<3x6xbf16>
  return %r : tensor<3x6xbf16>
}

// A table of 70000 rows is two ranges (65535 + 4465 rows): the second
// gathers with the index shifted by 65535, and its rows replace the first's
// where index >= 65535 (copy_predicated with the [3, 1] mask broadcast).
// CHECK-LABEL: func.func @gather_big_table
// CHECK: nisa.dma_gather %[[R:.*]] <0, [2048, 1], [3, 2]>, %arg0 <0, [2, 1], [65535, 2]>, %[[I:[0-9]+]]
// CHECK: nisa.tensor_scalar %[[J:.*]] <0, [1, 1], [3, 1]>, %[[I]] <0, [1, 1], [3, 1]> subtract 6.553500e+04
// CHECK: nisa.dma_gather %[[P:.*]] <0, [2048, 1], [3, 2]>, %arg0 <131070, [2, 1], [4465, 2]>, %[[J]]
// CHECK: nisa.tensor_scalar %[[M:.*]] <0, [1, 1], [3, 1]>, %[[I]] <0, [1, 1], [3, 1]> is_ge 6.553500e+04
// CHECK: nisa.copy_predicated %[[R]] <0, [2048, 1], [3, 2]>, %[[M]] <0, [1, 0], [3, 2]>, %[[P]] <0, [2048, 1], [3, 2]> on vector
func.func @gather_big_table(%t: tensor<70000x2xf32>, %i: tensor<3xi32>) -> tensor<3x2xf32> {
  %g = trn.gather_rows %t, %i : tensor<70000x2xf32>, tensor<3xi32> -> tensor<3x2xf32>
  return %g : tensor<3x2xf32>
}
