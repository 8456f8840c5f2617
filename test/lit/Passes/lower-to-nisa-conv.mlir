// trn.conv2d as implicit GEMM and trn.matmul with a batch dim.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s

// 3x3 kernel, 128 -> 8 channels, 6x6 output, no padding: the input is read
// in place; 9 products (one per kernel position, C = 128 on partitions) per
// output tile accumulate in one PSUM tile; weights load once. (With fewer
// input channels the packed or position GEMM would take fewer
// instructions: lower-to-nisa-conv-nests.mlir.)
// The weight [8, 128, 3, 3] is wanted as [c, m] per kernel position, whose
// direct load reads single elements; it is loaded as its 8 contiguous rows
// [m, (c, i, j)] instead and each position's [m, c] columns (stride 9) are
// transposed on the Tensor Engine into one PSUM bank, copied out once.
// CHECK-LABEL: func.func @conv_valid
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %[[ROWS:.*]] <0, [1152, 1], [8, 1152]>, %arg1 <0, [1152, 1], [8, 1152]>
// CHECK-NOT: %arg1
// CHECK: %[[PS:.*]] = nisa.alloc : <psum, 128, 72, f32>
// CHECK: nisa.matmul %[[PS]] <0, [72, 1], [128, 8]>, %[[ROWS]] <0, [1152, 9], [8, 128]>, %{{.*}} <0, [128, 1], [8, 8]> transpose
// CHECK-COUNT-7: nisa.matmul %[[PS]] {{.*}} transpose
// CHECK: nisa.matmul %[[PS]] <64, [72, 1], [128, 8]>, %[[ROWS]] <8, [1152, 9], [8, 128]>, {{.*}} transpose
// CHECK: nisa.tensor_copy %[[W:.*]] <0, [72, 1], [128, 72]>, %[[PS]]
// The moving operands: the 8x8 input rows the output tile reads come in by
// one DMA (a slab, one run per partition), and each kernel position's
// shifted 6x6 window is an access pattern into it.
// CHECK: nisa.alloc : <psum, 8, 36, f32>
// CHECK: nisa.dma_copy %[[SLAB:.*]] <0, [64, 1], [128, 64]>, %arg0 <0, [64, 8, 1], [128, 8, 8]>
// CHECK: nisa.matmul %{{.*}}, %[[W]] <0, [72, 1], [128, 8]>, %[[SLAB]] <0, [64, 8, 1], [128, 6, 6]>
// CHECK: nisa.matmul %{{.*}}, %[[W]] <8, [72, 1], [128, 8]>, %[[SLAB]] <1, [64, 8, 1], [128, 6, 6]> accumulate
// CHECK-COUNT-6: nisa.matmul {{.*}}accumulate
// CHECK: nisa.matmul %{{.*}}, %[[W]] <64, [72, 1], [128, 8]>, %[[SLAB]] <18, [64, 8, 1], [128, 6, 6]> accumulate
// CHECK-NOT: %arg0
// CHECK: nisa.dma_copy %arg2 <0, [36, 6, 1], [8, 6, 6]>
func.func @conv_valid(%x: tensor<1x128x8x8xf32>, %w: tensor<8x128x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %0 = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<1x128x8x8xf32>, tensor<8x128x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}

// An input gradient's weight: W [128, 8, 3, 3] read as [8 out, 128 in]
// with the kernel flipped. Each input channel c's (m, i, j) are one run, so
// one DMA of rows [c, (m, i, j)] serves all nine kernel positions, each read
// at stride 9 from position 8 - (3i + j); nothing is transposed.
// CHECK-LABEL: func.func @conv_transposed_weight
// CHECK: nisa.dma_copy %[[ROWS:.*]] <0, [72, 1], [128, 72]>, %arg1 <0, [72, 1], [128, 72]>
// CHECK-NOT: transpose
// CHECK-NOT: %arg1
// CHECK: nisa.matmul %{{.*}}, %[[ROWS]] <8, [72, 9], [128, 8]>
// CHECK-COUNT-8: nisa.matmul %{{.*}}, %[[ROWS]] <{{[0-7]}}, [72, 9], [128, 8]>, {{.*}} accumulate
func.func @conv_transposed_weight(%x: tensor<1x128x8x8xf32>, %w: tensor<128x8x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %wt = trn.transpose %w permutation = [1, 0, 2, 3] : tensor<128x8x3x3xf32> -> tensor<8x128x3x3xf32>
  %0 = trn.conv2d %x, %wt {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = true}
       : (tensor<1x128x8x8xf32>, tensor<8x128x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}

// A 1x1 kernel's weight read transposed ([c, m] with m contiguous) is
// loaded directly: contiguous runs already.
// CHECK-LABEL: func.func @conv_1x1_contiguous_weight
// CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [128, 8]>, %arg1 <0, [8, 1], [128, 8]>
// CHECK-NOT: transpose
func.func @conv_1x1_contiguous_weight(%x: tensor<1x128x4x4xf32>, %w: tensor<128x8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %wt = trn.transpose %w permutation = [1, 0, 2, 3] : tensor<128x8x1x1xf32> -> tensor<8x128x1x1xf32>
  %0 = trn.conv2d %x, %wt {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<1x128x4x4xf32>, tensor<8x128x1x1xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// Padding 1, stride 2: the input is first copied into a zeroed 9x9 scratch
// (extent (4-1)*2 + 3 = 9), loaded whole as the slab, whose windows the
// matmuls read with stride 2.
// CHECK-LABEL: func.func @conv_padded_strided
// CHECK: nisa.dram_alloc : memref<10368xf32>
// CHECK: nisa.memset
// CHECK: nisa.dma_copy %0 <10, [81, 9, 1], [128, 8, 8]>
// CHECK: nisa.dma_copy %[[SLAB:.*]] <0, [81, 1], [128, 81]>, %0 <0, [81, 9, 1], [128, 9, 9]>
// CHECK: nisa.matmul {{.*}}, %[[SLAB]] <0, [81, 18, 2], [128, 4, 4]>
func.func @conv_padded_strided(%x: tensor<1x128x8x8xf32>, %w: tensor<3x128x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = trn.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<1x128x8x8xf32>, tensor<3x128x3x3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// A batched matmul is one matrix product per batch, at the batch's offsets.
// CHECK-LABEL: func.func @bmm
// CHECK-COUNT-2: nisa.matmul
// CHECK: nisa.dma_copy %arg2 <12, [3, 1], [4, 3]>
func.func @bmm(%a: tensor<2x4x5xf32>, %b: tensor<2x5x3xf32>) -> tensor<2x4x3xf32> {
  %0 = trn.matmul %a, %b : (tensor<2x4x5xf32>, tensor<2x5x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// A batch of 4: the first image is emitted as it is (it loads and transposes
// the resident weight), the other three are one loop whose body is image 1,
// the input and the result read through windows moving one image (128 x 8 x
// 8 and 8 x 6 x 6 elements) per iteration; the weight is not loaded again.
// CHECK-LABEL: func.func @conv_batch_loop
// CHECK: nisa.dma_copy %{{.*}}, %arg1 <0, [1152, 1], [8, 1152]>
// CHECK: nisa.dma_copy %arg2 <0, [36, 6, 1], [8, 6, 6]>
// CHECK: scf.for %[[I:[a-z0-9]+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT: %[[X:[0-9]+]] = nisa.hbm_window %arg0[%[[I]] * 8192] : memref<32768xf32>
// CHECK-NEXT: %[[Y:[0-9]+]] = nisa.hbm_window %arg2[%[[I]] * 288] : memref<1152xf32>
// CHECK-NOT: %arg1
// CHECK: nisa.dma_copy %{{.*}} <0, [64, 1], [128, 64]>, %[[X]] <8192, [64, 8, 1], [128, 8, 8]>
// CHECK: nisa.dma_copy %[[Y]] <288, [36, 6, 1], [8, 6, 6]>
// CHECK-NEXT: }
func.func @conv_batch_loop(%x: tensor<4x128x8x8xf32>, %w: tensor<8x128x3x3xf32>) -> tensor<4x8x6x6xf32> {
  %0 = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<4x128x8x8xf32>, tensor<8x128x3x3xf32>) -> tensor<4x8x6x6xf32>
  return %0 : tensor<4x8x6x6xf32>
}
