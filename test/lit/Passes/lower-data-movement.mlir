// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s

// A slice is a view: the copy into the output (one HBM -> HBM transfer, no
// SBUF hop) reads x from element 1*6 + 5 = 11 with the column stride negated
// (flip) and the rows stepped by 2.
// CHECK-LABEL: func.func @slice_flip
// CHECK-NOT: nisa.alloc
// CHECK: nisa.dma_copy %arg1 <0, [6, 1], [2, 6]>, %arg0 <11, [12, -1], [2, 6]> : memref<12xf32>, memref<24xf32>
// CHECK-NEXT: return
func.func @slice_flip(%x: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %0 = trn.slice %x starts = [1, 5] steps = [2, -1] : tensor<4x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// cat along dim 1: each input is copied into its column window of the output
// (offsets 0 and 2 of rows of 5), HBM to HBM.
// CHECK-LABEL: func.func @concat
// CHECK: nisa.dma_copy %arg2 <0, [5, 1], [4, 2]>, %arg0 <0, [2, 1], [4, 2]>
// CHECK: nisa.dma_copy %arg2 <2, [5, 1], [4, 3]>, %arg1 <0, [3, 1], [4, 3]>
// CHECK-NEXT: return
func.func @concat(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> tensor<4x5xf32> {
  %0 = trn.concat %a, %b dim = 1 : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// arange of 300: rows of 3 over 100 partitions; row p starts at index 3p.
// CHECK-LABEL: func.func @iota
// CHECK: %[[T:.*]] = nisa.alloc : <sbuf, 100, 3, f32>
// CHECK: nisa.iota %[[T]] <0, [3, 1], [100, 3]>, base = 3.000000e+00, scale = 5.000000e-01, coefs = [3, 1] on gpsimd
// CHECK: nisa.dma_copy %arg0 <0, [3, 1], [100, 3]>, %[[T]]
func.func @iota() -> tensor<300xf32> {
  %0 = trn.iota start = 3.0 step = 0.5 : tensor<300xf32>
  return %0 : tensor<300xf32>
}

// tril(diagonal=1) per matrix: keep column - row - 1 <= 0.
// CHECK-LABEL: func.func @tril
// CHECK: nisa.dma_copy %[[A:.*]] <0, [5, 1], [3, 5]>, %arg0 <0, [5, 1], [3, 5]>
// CHECK: nisa.affine_select is_le %[[B:.*]] <0, [5, 1], [3, 5]>, %[[A]] <0, [5, 1], [3, 5]>, offset = -1.000000e+00, coefs = [-1, 1], fill = 0.000000e+00 on gpsimd
// CHECK: nisa.dma_copy %arg1 <0, [5, 1], [3, 5]>, %[[B]]
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <15, [5, 1], [3, 5]>
// CHECK: nisa.affine_select is_le
// CHECK: nisa.dma_copy %arg1 <15, [5, 1], [3, 5]>
func.func @tril(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %0 = trn.triangle %x diagonal = 1 upper = false : tensor<2x3x5xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// triu(diagonal=-1) of a 200-row matrix: the second row tile starts at row
// 128, so its offset is 0 - 128 + 1.
// CHECK-LABEL: func.func @triu
// CHECK: nisa.affine_select is_ge {{.*}} offset = 1.000000e+00, coefs = [-1, 1]
// CHECK: nisa.affine_select is_ge {{.*}} offset = -1.270000e+02, coefs = [-1, 1]
func.func @triu(%x: tensor<200x8xf32>) -> tensor<200x8xf32> {
  %0 = trn.triangle %x diagonal = -1 upper = true : tensor<200x8xf32> -> tensor<200x8xf32>
  return %0 : tensor<200x8xf32>
}

// An integer arange: the iota writes an i32 tile, the DMA widens it to i64.
// CHECK-LABEL: func.func @iota_i64
// CHECK: %[[T:.*]] = nisa.alloc : <sbuf, 6, 1, i32>
// CHECK: nisa.iota %[[T]] <0, [1, 1], [6, 1]>, base = -2.000000e+00, scale = 3.000000e+00
// CHECK: nisa.dma_copy %arg0 <0, [1, 1], [6, 1]>, %[[T]] {{.*}} : memref<6xi64>, !nisa.tile<sbuf, 6, 1, i32>
func.func @iota_i64() -> tensor<6xi64> {
  %0 = trn.iota start = -2.0 step = 3.0 : tensor<6xi64>
  return %0 : tensor<6xi64>
}

// tril of int64 and bool: the same affine_select on an i32 / i1 tile.
// CHECK-LABEL: func.func @tril_int_bool
// CHECK: nisa.dma_copy %[[A:.*]] <0, [4, 1], [3, 4]>, %arg0 <0, [4, 1], [3, 4]> : !nisa.tile<sbuf, 3, 4, i32>, memref<12xi64>
// CHECK: nisa.affine_select is_le %[[B:.*]] <0, [4, 1], [3, 4]>, %[[A]]
// CHECK: nisa.dma_copy %arg2 <0, [4, 1], [3, 4]>, %[[B]]
// CHECK: nisa.affine_select is_ge {{.*}} : <sbuf, 3, 4, i1>, <sbuf, 3, 4, i1>
func.func @tril_int_bool(%x: tensor<3x4xi64>, %y: tensor<3x4xi1>) -> (tensor<3x4xi64>, tensor<3x4xi1>) {
  %0 = trn.triangle %x diagonal = 0 upper = false : tensor<3x4xi64> -> tensor<3x4xi64>
  %1 = trn.triangle %y diagonal = 0 upper = true : tensor<3x4xi1> -> tensor<3x4xi1>
  return %0, %1 : tensor<3x4xi64>, tensor<3x4xi1>
}
