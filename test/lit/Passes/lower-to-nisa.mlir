// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | FileCheck %s
// The output must pass the nisa verifiers when read back.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | trnc-opt | FileCheck %s

// One tile: stationary A^T loaded by a DMA walking A transposed, fp32 PSUM,
// PSUM -> SBUF on the Scalar engine, stored into the output argument.
// CHECK-LABEL: func.func @matmul_small
// CHECK-SAME: %[[A:.*]]: memref<128xf32> {nisa.input = 0 : i64, nisa.shape = array<i64: 8, 16>, nisa.strides = array<i64: 16, 1>}
// CHECK-SAME: %[[B:.*]]: memref<64xf32> {nisa.input = 1 : i64
// CHECK-SAME: %[[C:.*]]: memref<32xf32> {nisa.output = 0 : i64, nisa.shape = array<i64: 8, 4>
// CHECK-SAME: trn.graph_name = "g0"
// CHECK: %[[S:.*]] = nisa.alloc : <sbuf, 16, 8, f32>
// CHECK: nisa.dma_copy %[[S]] <0, [8, 1], [16, 8]>, %[[A]] <0, [1, 16], [16, 8]>
// CHECK: %[[P:.*]] = nisa.alloc : <psum, 8, 4, f32>
// CHECK: %[[M:.*]] = nisa.alloc : <sbuf, 16, 4, f32>
// CHECK: nisa.dma_copy %[[M]] <0, [4, 1], [16, 4]>, %[[B]] <0, [4, 1], [16, 4]>
// CHECK: nisa.matmul %[[P]] <0, [4, 1], [8, 4]>, %[[S]] <0, [8, 1], [16, 8]>, %[[M]] <0, [4, 1], [16, 4]> :
// CHECK: nisa.tensor_copy %[[O:.*]] <0, [4, 1], [8, 4]>, %[[P]] <0, [4, 1], [8, 4]> on scalar
// CHECK: nisa.dma_copy %[[C]] <0, [4, 1], [8, 4]>, %[[O]]
// CHECK-NEXT: return
func.func @matmul_small(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> attributes {trn.graph_name = "g0"} {
  %0 = trn.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// bf16 operands stay bf16 in SBUF; the product accumulates in fp32 PSUM and
// the copy out of PSUM casts to bf16.
// CHECK-LABEL: func.func @matmul_bf16
// CHECK: nisa.alloc : <sbuf, 16, 8, bf16>
// CHECK: %[[P:.*]] = nisa.alloc : <psum, 8, 4, f32>
// CHECK: nisa.matmul %[[P]] {{.*}} : <psum, 8, 4, f32>, <sbuf, 16, 8, bf16>, <sbuf, 16, 4, bf16>
// CHECK: nisa.tensor_copy {{.*}} on scalar : <sbuf, 8, 4, bf16>, <psum, 8, 4, f32>
func.func @matmul_bf16(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>) -> tensor<8x4xbf16> {
  %0 = trn.matmul %a, %b : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}

// A transposed input is a view: no copy, the stationary DMA reads x rows
// contiguously.
// CHECK-LABEL: func.func @transposed_input
// CHECK-NOT: dram_alloc
// CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [16, 8]>, %arg0 <0, [8, 1], [16, 8]>
// CHECK: nisa.matmul
func.func @transposed_input(%x: tensor<16x8xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %t = trn.transpose %x permutation = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %0 = trn.matmul %t, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// The broadcast operand is read with stride 0 on the partition dim.
// CHECK-LABEL: func.func @add_broadcast
// CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [4, 8]>, %arg0 <0, [8, 1], [4, 8]>
// CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [4, 8]>, %arg1 <0, [0, 1], [4, 8]>
// CHECK: nisa.tensor_tensor add {{.*}} on {{vector|gpsimd|scalar}}
// CHECK: nisa.dma_copy %arg2 <0, [8, 1], [4, 8]>
func.func @add_broadcast(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %bb = trn.broadcast %b : tensor<8xf32> -> tensor<4x8xf32>
  %0 = trn.add %x, %bb : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// relu on the Scalar engine; threshold_backward as a select: mask, zeros,
// predicated copy of the gradient (so inf/NaN gradients under the mask
// give 0, as torch's where).
// CHECK-LABEL: func.func @relu_threshold
// CHECK: nisa.activation relu
// CHECK: nisa.tensor_scalar %[[X:.*]] <0, [1, 1], [24, 1]>, %[[X]] <0, [1, 1], [24, 1]> is_gt 0.000000e+00, bypass
// CHECK: nisa.memset %[[O:[0-9]+]] <0, [1, 1], [24, 1]>, 0.000000e+00 on vector
// CHECK: nisa.copy_predicated %[[O]] <0, [1, 1], [24, 1]>, %[[X]] <0, [1, 1], [24, 1]>, {{.*}} on vector
func.func @relu_threshold(%g: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %r = trn.relu %x : tensor<4x6xf32>
  %0 = trn.threshold_backward %g, %r, 0.0 : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Sum over the batch dim of a row-major tensor on the Tensor Engine, per
// block of 512 columns: each [128, 512] tile of X is the stationary operand
// of four matmuls with a column of ones (X^T @ ones: 128 columns summed into
// one PSUM column each, accumulating over the row tiles); the block's sums
// are stored one element per partition, a partial block of 60 apart.
// CHECK-LABEL: func.func @sum_dim0
// CHECK: %[[ONES:.*]] = nisa.alloc : <sbuf, 128, 1, f32>
// CHECK: nisa.memset %[[ONES]] <0, [1, 1], [128, 1]>, 1.000000e+00 on gpsimd
// CHECK: nisa.dma_copy %[[X:[0-9]+]] <0, [512, 1], [128, 512]>, %arg0 <0, [700, 1], [128, 512]>
// CHECK: nisa.matmul %[[P:[0-9]+]] <0, [4, 1], [128, 1]>, %[[X]] <0, [512, 1], [128, 128]>, %[[ONES]] <0, [1, 1], [128, 1]> : <psum, 128, 4, f32>
// CHECK: nisa.matmul %[[P]] <3, [4, 1], [128, 1]>, %[[X]] <384, [512, 1], [128, 128]>, %[[ONES]]
// CHECK: nisa.matmul %[[P]] <0, [4, 1], [128, 1]>, {{.*}} accumulate
// CHECK: nisa.matmul %[[P]] <0, [4, 1], [128, 1]>, %{{[0-9]+}} <0, [512, 1], [44, 128]>, %[[ONES]] <0, [1, 1], [44, 1]> accumulate
// CHECK: nisa.tensor_copy %[[O:[0-9]+]] <0, [4, 1], [128, 4]>, %[[P]] {{.*}} on scalar
// CHECK: nisa.dma_copy %arg1 <0, [1, 128], [128, 4]>, %[[O]] <0, [4, 1], [128, 4]>
// CHECK: nisa.matmul %[[P2:[0-9]+]] <1, [2, 1], [60, 1]>, %{{[0-9]+}} <128, [188, 1], [128, 60]>, %[[ONES]]
// CHECK: nisa.dma_copy %arg1 <512, [1, 128], [128, 1]>
// CHECK: nisa.dma_copy %arg1 <640, [1, 1], [60, 1]>
func.func @sum_dim0(%x: tensor<300x700xf32>) -> tensor<700xf32> {
  %0 = trn.reduce_sum %x dims = [0] : tensor<300x700xf32> -> tensor<700xf32>
  return %0 : tensor<700xf32>
}

// Three bf16 row tiles do not pay for stores of one element per partition:
// the column of ones is the stationary operand, each matmul adds 128 rows x
// 512 columns into one PSUM row, stored contiguously.
// CHECK-LABEL: func.func @sum_dim0_few_rows
// CHECK: %[[ONES:.*]] = nisa.alloc : <sbuf, 128, 1, bf16>
// CHECK: nisa.matmul %[[P:.*]] <0, [512, 1], [1, 512]>, %[[ONES]] <0, [1, 1], [128, 1]>
// CHECK: nisa.matmul %[[P]] {{.*}} accumulate
// CHECK: nisa.matmul %[[P]] {{.*}}, %[[ONES]] <0, [1, 1], [44, 1]>, {{.*}} accumulate
// CHECK: nisa.tensor_copy {{.*}}, %[[P]] {{.*}} on scalar
// CHECK: nisa.dma_copy %arg1 <0, [512, 1], [1, 512]>
// CHECK: nisa.dma_copy %arg1 <512, [188, 1], [1, 188]>
func.func @sum_dim0_few_rows(%x: tensor<300x700xbf16>) -> tensor<700xbf16> {
  %0 = trn.reduce_sum %x dims = [0] : tensor<300x700xbf16> -> tensor<700xbf16>
  return %0 : tensor<700xbf16>
}

// Sum to a 0-d result: one row, one block of 32, tensor_reduce into an fp32
// accumulator, cast to bf16 on the way out.
// CHECK-LABEL: func.func @sum_all
// CHECK-SAME: memref<1xbf16> {nisa.output = 0 : i64, nisa.shape = array<i64>, nisa.strides = array<i64>}
// CHECK: nisa.dma_copy %{{.*}} <0, [32, 1], [1, 32]>, %arg0 <0, [1, 1], [1, 32]>
// CHECK: %[[ACC:.*]] = nisa.alloc : <sbuf, 1, 1, f32>
// CHECK: nisa.tensor_reduce add %[[ACC]] <0, [1, 1], [1, 1]>, {{.*}} on vector
// CHECK: nisa.tensor_copy {{.*}}, %[[ACC]] {{.*}} on scalar : <sbuf, 1, 1, bf16>, <sbuf, 1, 1, f32>
func.func @sum_all(%x: tensor<4x8xbf16>) -> tensor<bf16> {
  %0 = trn.reduce_sum %x dims = [0, 1] : tensor<4x8xbf16> -> tensor<bf16>
  return %0 : tensor<bf16>
}

// Rows of a long reduction are chunked; each chunk sums in blocks of 32
// (one grouped tensor_reduce, plus the short tail block) into a partials
// tile of 94 = 64 + 30 columns, which sums as a 32-ary tree (94 -> 3 -> 1).
// CHECK-LABEL: func.func @sum_rows_chunked
// CHECK: nisa.tensor_reduce add %[[P:[^ ]*]] <0, [94, 1], [100, 64]>, %{{.*}} <0, [2048, 32, 1], [100, 64, 32]>
// CHECK: nisa.tensor_reduce add %[[P]] <64, [94, 1], [100, 29]>, %[[T:[^ ]*]] <0, [952, 32, 1], [100, 29, 32]>
// CHECK: nisa.tensor_reduce add %[[P]] <93, [94, 1], [100, 1]>, %[[T]] <928, [952, 1], [100, 24]>
// CHECK: nisa.tensor_reduce add %[[L:[^ ]*]] <0, [3, 1], [100, 2]>, %[[P]] <0, [94, 32, 1], [100, 2, 32]>
// CHECK: nisa.tensor_reduce add %[[L]] <2, [3, 1], [100, 1]>, %[[P]] <64, [94, 1], [100, 30]>
// CHECK: nisa.tensor_reduce add %[[ACC:[^ ]*]] <0, [1, 1], [100, 1]>, %[[L]] <0, [3, 1], [100, 3]>
// CHECK: nisa.dma_copy %arg1 <0, [1, 1], [100, 1]>, %[[ACC]]
func.func @sum_rows_chunked(%x: tensor<100x3000xf32>) -> tensor<100xf32> {
  %0 = trn.reduce_sum %x dims = [1] : tensor<100x3000xf32> -> tensor<100xf32>
  return %0 : tensor<100xf32>
}

// A reshape of a transposed view is not expressible as strides: copied to
// a contiguous scratch first (HBM to HBM).
// CHECK-LABEL: func.func @reshape_copy
// CHECK: %[[SCRATCH:.*]] = nisa.dram_alloc : memref<24xf32>
// CHECK: nisa.dma_copy %[[SCRATCH]] <0, [4, 1], [6, 4]>, %arg0 <0, [1, 6], [6, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %[[SCRATCH]]
// CHECK: nisa.activation relu
func.func @reshape_copy(%x: tensor<4x6xf32>) -> tensor<24xf32> {
  %t = trn.transpose %x permutation = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %r = trn.reshape %t : tensor<6x4xf32> -> tensor<24xf32>
  %0 = trn.relu %r : tensor<24xf32>
  return %0 : tensor<24xf32>
}

// A reshape of a contiguous tensor is a view: no scratch.
// CHECK-LABEL: func.func @reshape_view
// CHECK-NOT: dram_alloc
// CHECK: return
func.func @reshape_view(%x: tensor<4x6xf32>) -> tensor<3x8xf32> {
  %r = trn.reshape %x : tensor<4x6xf32> -> tensor<3x8xf32>
  %0 = trn.mul %r, %r : tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// The first result is written in place with its declared column-major
// strides, walked in its own memory order (contiguous rows of the output);
// the second is an input returned as is, copied into its output.
// CHECK-LABEL: func.func @strided_output
// CHECK-SAME: %arg1: memref<24xf32> {nisa.output = 0 : i64, nisa.shape = array<i64: 4, 6>, nisa.strides = array<i64: 1, 4>}
// CHECK-SAME: %arg2: memref<24xf32> {nisa.output = 1 : i64
// CHECK-NOT: dram_alloc
// CHECK: nisa.tensor_scalar {{.*}} multiply 2.000000e+00, bypass
// CHECK: nisa.dma_copy %arg1 <0, [4, 1], [6, 4]>
// CHECK: nisa.dma_copy %arg2 {{.*}}, %arg0 {{.*}} : memref<24xf32>, memref<24xf32>
func.func @strided_output(%x: tensor<4x6xf32>) -> (tensor<4x6xf32> {trn.stride = array<i64: 1, 4>}, tensor<4x6xf32>) {
  %0 = trn.mul_scalar %x, 2.0 : tensor<4x6xf32>
  return %0, %x : tensor<4x6xf32>, tensor<4x6xf32>
}

// 1000 elements spread over 125 partitions of 8.
// CHECK-LABEL: func.func @convert_1d
// CHECK: nisa.dma_copy %[[T:.*]] <0, [8, 1], [125, 8]>, %arg0 <0, [8, 1], [125, 8]> : !nisa.tile<sbuf, 125, 8, bf16>, memref<1000xf32>
// CHECK: nisa.dma_copy %arg1 <0, [8, 1], [125, 8]>, %[[T]]
func.func @convert_1d(%x: tensor<1000xf32>) -> tensor<1000xbf16> {
  %0 = trn.convert %x : tensor<1000xf32> -> tensor<1000xbf16>
  return %0 : tensor<1000xbf16>
}

// A contiguous fill is 1-D: 123 partitions of 17, then a 9-element tail;
// one memset serves every store.
// CHECK-LABEL: func.func @full
// CHECK: %[[F:.*]] = nisa.alloc : <sbuf, 123, 17, f32>
// CHECK: nisa.memset %[[F]] <0, [17, 1], [123, 17]>, 3.000000e+00 on gpsimd
// CHECK: nisa.dma_copy %arg0 <0, [17, 1], [123, 17]>, %[[F]]
// CHECK: nisa.dma_copy %arg0 <2091, [9, 1], [1, 9]>, %[[F]] <0, [17, 1], [1, 9]>
func.func @full() -> tensor<300x7xf32> {
  %0 = trn.full 3.0 : tensor<300x7xf32>
  return %0 : tensor<300x7xf32>
}
