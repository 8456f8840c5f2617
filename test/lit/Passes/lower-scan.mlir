// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// The output must pass the nisa verifiers when read back.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s

// One chunk per row: tensor_scan into fp32, cast on the Scalar engine.
// CHECK-LABEL: func.func @cumsum_bf16
// CHECK: nisa.dma_copy %[[X:[^ ]*]] <0, [8, 1], [4, 8]>, %arg0 <0, [8, 1], [4, 8]>
// CHECK: nisa.tensor_scan add %[[S:[^ ]*]] <0, [8, 1], [4, 8]>, %[[X]] <0, [8, 1], [4, 8]> on vector
// CHECK-NOT: nisa.tensor_tensor
// CHECK: nisa.tensor_copy %[[C:[^ ]*]] {{.*}}, %[[S]] {{.*}} on scalar
// CHECK: nisa.dma_copy %arg1 <0, [8, 1], [4, 8]>, %[[C]]
func.func @cumsum_bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = trn.cumsum %x dim = 1 : tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// A row longer than one tile: the second chunk adds the first chunk's last
// column, as tensor_scalar's per-partition operand.
// CHECK-LABEL: func.func @cumprod_chunked
// CHECK: nisa.tensor_scan multiply %[[S0:[^ ]*]] <0, [2048, 1], [3, 2048]>
// CHECK: nisa.dma_copy %arg1 <0, [3000, 1], [3, 2048]>, %[[S0]]
// CHECK: nisa.tensor_scan multiply %[[S1:[^ ]*]] <0, [952, 1], [3, 952]>
// CHECK: nisa.tensor_scalar %[[S1]] <0, [952, 1], [3, 952]>, %[[S1]] <0, [952, 1], [3, 952]> multiply 0.000000e+00 per_partition %[[S0]] <2047, [2048, 1], [3, 1]>, bypass 0.000000e+00 on vector
// CHECK: nisa.dma_copy %arg1 <2048, [3000, 1], [3, 952]>, %[[S1]]
func.func @cumprod_chunked(%x: tensor<3x3000xf32>) -> tensor<3x3000xf32> {
  %0 = trn.cumprod %x dim = 1 : tensor<3x3000xf32>
  return %0 : tensor<3x3000xf32>
}

// A scan over the leading dim reads columns as rows (strided DMA).
// CHECK-LABEL: func.func @cumsum_dim0
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [1, 8], [8, 4]>
// CHECK: nisa.tensor_scan add
// CHECK: nisa.dma_copy %arg1 <0, [1, 8], [8, 4]>
func.func @cumsum_dim0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = trn.cumsum %x dim = 0 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
