// trn.conv2d's loop nests other than the channel GEMM (LowerConv.cpp picks
// the one with the fewest instructions).
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s

// A weight gradient's convolution (forward batch 2 as channels, an 8x8
// output-gradient map as the kernel, the 3x3 weight as output): the 64
// kernel positions are the contraction on partitions, one matmul per input
// channel into one PSUM tile [8 outputs, (4 batch, 3, 3)]; the channel GEMM
// would issue 4 x 64 matmuls with K = 2.
// CHECK-LABEL: func.func @weight_grad
// CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [64, 8]>, %arg1 <0, [8, 1, 128], [8, 8, 8]>
// CHECK: nisa.dma_copy %{{.*}} <0, [36, 1], [64, 36]>, %arg0 <0, [10, 1, 200, 10, 1], [8, 8, 4, 3, 3]>
// CHECK: nisa.matmul
// CHECK: nisa.dma_copy %{{.*}}, %arg1 <64, [8, 1, 128], [8, 8, 8]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <100, [10, 1, 200, 10, 1], [8, 8, 4, 3, 3]>
// CHECK: nisa.matmul {{.*}}accumulate
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %arg2 <0, [9, 72, 3, 1], [8, 4, 3, 3]>
func.func @weight_grad(%x: tensor<4x2x10x10xf32>, %w: tensor<8x2x8x8xf32>) -> tensor<4x8x3x3xf32> {
  %0 = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<4x2x10x10xf32>, tensor<8x2x8x8xf32>) -> tensor<4x8x3x3xf32>
  return %0 : tensor<4x8x3x3xf32>
}

// Depthwise 3x3 over 32 channels: channels on partitions, the weights one
// [32, 9] tile, each tap a window DMA and a multiply by the tap's weight
// column (tensor_scalar's per-partition operand), added into one fp32 accumulator on the Vector engine;
// no matmul (the channel GEMM would issue 32 x 9 x 2 with K = M = 1).
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %{{.*}} <0, [9, 1], [32, 9]>, %arg1 <0, [9, 9, 3, 1], [32, 1, 3, 3]>
// CHECK: nisa.dma_copy %{{.*}} <0, [576, 1], [32, 576]>, %0 <0, [676, 26, 1], [32, 24, 24]>
// CHECK: nisa.tensor_scalar %[[ACC:[0-9]+]] {{.*}} multiply 0.000000e+00 per_partition %{{.*}} <0, [9, 1], [32, 1]>, bypass 0.000000e+00 on vector
// CHECK: nisa.tensor_scalar %[[PROD:[0-9]+]] {{.*}} multiply 0.000000e+00 per_partition %{{.*}} <1, [9, 1], [32, 1]>, bypass 0.000000e+00 on vector
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]] {{.*}}, %[[PROD]]
// CHECK: nisa.dma_copy %{{.*}} <0, [576, 1], [32, 576]>, %0 <54, [676, 26, 1], [32, 24, 24]>
// CHECK: nisa.tensor_scalar %[[PROD]] {{.*}} multiply 0.000000e+00 per_partition %{{.*}} <8, [9, 1], [32, 1]>, bypass 0.000000e+00 on vector
// CHECK: nisa.tensor_tensor add %[[ACC]]
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %arg2 <0, [576, 24, 1], [32, 24, 24]>, %[[ACC]]
func.func @depthwise(%x: tensor<1x32x24x24xf32>, %w: tensor<32x1x3x3xf32>) -> tensor<1x32x24x24xf32> {
  %0 = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 32 : i64, flip = false}
       : (tensor<1x32x24x24xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x24x24xf32>
  return %0 : tensor<1x32x24x24xf32>
}

// A depthwise weight gradient (32 groups, 2 inputs each, an 8x8 kernel, a
// 3x3 output): per input channel the weights load once, and each of the 9
// outputs is a window DMA, a product, a sum per kernel row and a sum of the
// 8 row sums into its column; the second input channel's sums are added.
// CHECK-LABEL: func.func @depthwise_wgrad
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %{{.*}} <0, [64, 1], [32, 64]>, %arg1 <0, [128, 8, 1], [32, 8, 8]>
// CHECK: nisa.dma_copy %{{.*}} <0, [64, 1], [32, 64]>, %arg0 <0, [200, 10, 1], [32, 8, 8]>
// CHECK: nisa.tensor_tensor multiply
// CHECK: nisa.tensor_reduce add %{{.*}} <0, [8, 1], [32, 8]>, %{{.*}} <0, [64, 8, 1], [32, 8, 8]>
// CHECK: nisa.tensor_reduce add %[[ACC:[0-9]+]] <0, [9, 1], [32, 1]>
// CHECK-COUNT-8: nisa.tensor_reduce add %[[ACC]] <{{[1-8]}}, [9, 1], [32, 1]>
// CHECK: nisa.dma_copy %{{.*}}, %arg1 <64, [128, 8, 1], [32, 8, 8]>
// CHECK-COUNT-9: nisa.tensor_reduce add %[[PART:[0-9]+]] <{{[0-8]}}, [9, 1], [32, 1]>
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]] {{.*}}, %[[PART]]
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %arg2 <0, [9, 3, 1], [32, 3, 3]>, %[[ACC]]
func.func @depthwise_wgrad(%x: tensor<1x64x10x10xf32>, %w: tensor<32x2x8x8xf32>) -> tensor<1x32x3x3xf32> {
  %0 = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 32 : i64, flip = false}
       : (tensor<1x64x10x10xf32>, tensor<32x2x8x8xf32>) -> tensor<1x32x3x3xf32>
  return %0 : tensor<1x32x3x3xf32>
}

// A 7x7 stem over 3 channels: the packed GEMM puts every kernel position of
// 2 channels (K = 98) and then of the third (K = 49) on partitions: 2
// matmuls per output tile instead of 49 with K = 3.
// CHECK-LABEL: func.func @packed_stem
// CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [98, 8]>, %arg1 <0, [49, 7, 1, 147], [2, 7, 7, 8]>
// CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [49, 8]>, %arg1 <98, [49, 7, 1, 147], [1, 7, 7, 8]>
// CHECK: nisa.dma_copy %{{.*}} <0, [100, 1], [98, 100]>, %arg0 <0, [256, 16, 1, 16, 1], [2, 7, 7, 10, 10]>
// CHECK: nisa.matmul
// CHECK: nisa.dma_copy %{{.*}} <0, [100, 1], [49, 100]>, %arg0 <512, [256, 16, 1, 16, 1], [1, 7, 7, 10, 10]>
// CHECK: nisa.matmul {{.*}}accumulate
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %arg2 <0, [100, 10, 1], [8, 10, 10]>
func.func @packed_stem(%x: tensor<1x3x16x16xf32>, %w: tensor<8x3x7x7xf32>) -> tensor<1x8x10x10xf32> {
  %0 = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<1x3x16x16xf32>, tensor<8x3x7x7xf32>) -> tensor<1x8x10x10xf32>
  return %0 : tensor<1x8x10x10xf32>
}

// The same stem at stride 2: each partition's window reads every second
// input column, one DMA descriptor per element; it is loaded as the dense
// span (runs of 17 columns) and every second column copied out on Vector.
// CHECK-LABEL: func.func @packed_stem_strided
// CHECK: nisa.dma_copy %[[SPAN:.*]] <0, [153, 1], [98, 153]>, %arg0 <0, [529, 23, 1, 46, 1], [2, 7, 7, 9, 17]>
// CHECK: nisa.tensor_copy %[[WIN:.*]] <0, [81, 1], [98, 81]>, %[[SPAN]] <0, [153, 17, 2], [98, 9, 9]> on vector
// CHECK: nisa.matmul %{{.*}}, %[[WIN]] <0, [81, 1], [98, 81]>
func.func @packed_stem_strided(%x: tensor<1x3x23x23xf32>, %w: tensor<8x3x7x7xf32>) -> tensor<1x8x9x9xf32> {
  %0 = trn.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<1x3x23x23xf32>, tensor<8x3x7x7xf32>) -> tensor<1x8x9x9xf32>
  return %0 : tensor<1x8x9x9xf32>
}
