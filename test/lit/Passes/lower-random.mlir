// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s

// trn.random: the seed is loaded into all 128 partitions by one DMA of
// stride-0 rows; the 12000 elements are cut into rows of 94 (127 partitions)
// plus a tail row of 62, and each tile's counter is its elements' row-major
// index: base = the tile's first index, coefs = [row length, 1].
// CHECK-LABEL: func.func @rand
// CHECK: %[[K:.*]] = nisa.alloc : <sbuf, 128, 2, i32>
// CHECK: nisa.dma_copy %[[K]] <0, [2, 1], [128, 2]>, %arg0 <0, [0, 1], [128, 2]>
// CHECK: %[[T:.*]] = nisa.alloc : <sbuf, 127, 94, f32>
// CHECK: nisa.random %[[T]] <0, [94, 1], [127, 94]>, %[[K]] <0, [2, 1], [127, 2]>, base = 0, coefs = [94, 1] on gpsimd
// CHECK: nisa.dma_copy %arg1 <0, [94, 1], [127, 94]>, %[[T]]
// CHECK: nisa.random %[[U:.*]] <0, [62, 1], [1, 62]>, %[[K]] <0, [2, 1], [1, 2]>, base = 11938, coefs = [0, 1] on gpsimd
// CHECK: nisa.dma_copy %arg1 <11938, [62, 1], [1, 62]>, %[[U]]
func.func @rand(%seed: tensor<2xi32>) -> tensor<300x40xf32> {
  %0 = trn.random %seed : tensor<2xi32> -> tensor<300x40xf32>
  return %0 : tensor<300x40xf32>
}

// A bf16 result is generated in bf16 (exact there, Isa.h Random).
// CHECK-LABEL: func.func @rand_bf16
// CHECK: nisa.random %{{.*}} <0, [1, 1], [15, 1]>, %{{.*}} <0, [2, 1], [15, 2]>, base = 0, coefs = [1, 1] on gpsimd : <sbuf, 15, 1, bf16>
func.func @rand_bf16(%seed: tensor<2xi32>) -> tensor<3x5xbf16> {
  %0 = trn.random %seed : tensor<2xi32> -> tensor<3x5xbf16>
  return %0 : tensor<3x5xbf16>
}
