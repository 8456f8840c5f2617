// A result returned as a view (reshape, transpose) of a computed value is
// computed straight into the output buffer when the view of that buffer has
// the output's layout, or through the view that undoes the chain when it
// keeps the innermost dim contiguous: no scratch, no copy after.
// RUN: trnc-opt %s -split-input-file --trnc-tile-lower-to-nisa | FileCheck %s

// CHECK-LABEL: func.func @reshaped
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [512, 1], [128, 512]>
// CHECK-NOT: nisa.dma_copy
// CHECK: return
func.func @reshaped(%x: tensor<128x512xf32>) -> tensor<2x64x512xf32> {
  %0 = trn.exp %x : tensor<128x512xf32>
  %1 = trn.reshape %0 : tensor<128x512xf32> -> tensor<2x64x512xf32>
  return %1 : tensor<2x64x512xf32>
}

// -----

// The output's layout is the transpose's own ([4, 8] with strides [1, 4]):
// exp writes its [8, 4] row-major into the buffer.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %arg1
// CHECK-NOT: nisa.dma_copy
// CHECK: return
func.func @transposed(%x: tensor<8x4xf32>) -> (tensor<4x8xf32> {trn.stride = array<i64: 1, 4>}) {
  %0 = trn.exp %x : tensor<8x4xf32>
  %1 = trn.transpose %0 permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A row-major output of the transpose needs the copy.
// CHECK-LABEL: func.func @needs_copy
// CHECK: nisa.dram_alloc
// CHECK: nisa.dma_copy %arg1
// CHECK: return
func.func @needs_copy(%x: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %0 = trn.exp %x : tensor<8x4xf32>
  %1 = trn.transpose %0 permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A value returned through a permutation that keeps its innermost dim
// contiguous (a convolution weight gradient computed [C_in, C_out, k] and
// returned [C_out, C_in, k]) is computed into the inverse view of the
// output buffer (exp tiles it in the buffer's order, reading runs of k):
// no scratch and no copy after.
// CHECK-LABEL: func.func @permuted_in_place
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [12, 3, 1], [8, 4, 3]>
// CHECK-NOT: nisa.dma_copy
// CHECK: return
func.func @permuted_in_place(%x: tensor<4x8x3xf32>) -> tensor<8x4x3xf32> {
  %0 = trn.exp %x : tensor<4x8x3xf32>
  %1 = trn.transpose %0 permutation = [1, 0, 2] : tensor<4x8x3xf32> -> tensor<8x4x3xf32>
  return %1 : tensor<8x4x3xf32>
}
