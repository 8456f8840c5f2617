// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s

// A slice is a view: the copy into the output reads x from element
// 1*6 + 5 = 11 with the column stride negated (flip) and the rows stepped by 2.
// CHECK-LABEL: func.func @slice_flip
// CHECK: nisa.dma_copy %{{.*}} <0, [6, 1], [2, 6]>, %arg0 <11, [12, -1], [2, 6]>
// CHECK: nisa.dma_copy %arg1 <0, [6, 1], [2, 6]>
// CHECK-NEXT: return
func.func @slice_flip(%x: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %0 = trn.slice %x starts = [1, 5] steps = [2, -1] : tensor<4x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// cat along dim 1: each input is copied into its column window of the output
// (offsets 0 and 2 of rows of 5).
// CHECK-LABEL: func.func @concat
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [2, 1], [4, 2]>
// CHECK: nisa.dma_copy %arg2 <0, [5, 1], [4, 2]>
// CHECK: nisa.dma_copy %{{.*}}, %arg1 <0, [3, 1], [4, 3]>
// CHECK: nisa.dma_copy %arg2 <2, [5, 1], [4, 3]>
// CHECK-NEXT: return
func.func @concat(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> tensor<4x5xf32> {
  %0 = trn.concat %a, %b dim = 1 : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
