// Operands that need no transpose: a transposed view as A (the x^T of a
// weight gradient: A^T is then x itself, contiguous rows) and a tiny
// row-major product (a gather of 8 x 16 floats costs less than the
// transposes' latency). Neither builds an identity.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s

// CHECK-LABEL: func.func @weight_gradient
// CHECK-NOT: affine_select
// CHECK-NOT: transpose :
// A^T [256 tokens, 64] straight from x's rows.
// CHECK: nisa.dma_copy %{{.*}} <0, [64, 1], [128, 64]>, %arg0 <0, [64, 1], [128, 64]>
// CHECK-NOT: transpose :
// CHECK: return
func.func @weight_gradient(%x: tensor<256x64xf32>, %dy: tensor<256x32xf32>) -> tensor<64x32xf32> {
  %xt = trn.transpose %x permutation = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
  %0 = trn.matmul %xt, %dy : (tensor<64x256xf32>, tensor<256x32xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// CHECK-LABEL: func.func @tiny
// CHECK-NOT: affine_select
// CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [16, 8]>, %arg0 <0, [1, 16], [16, 8]>
// CHECK-NOT: transpose :
// CHECK: return
func.func @tiny(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = trn.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
