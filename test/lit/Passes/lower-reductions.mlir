// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// The output must pass the nisa verifiers when read back.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s

// max/min/prod share the sum lowering with their own ALU op, on the Vector
// engine (never the Tensor Engine's ones-vector path, which only adds).
// CHECK-LABEL: func.func @amax_rows
// CHECK: nisa.tensor_reduce max %[[ACC:[^ ]*]] <0, [1, 1], [7, 1]>, %{{.*}} <0, [300, 1], [7, 300]> on vector
// CHECK: nisa.dma_copy %arg1 <0, [1, 1], [7, 1]>, %[[ACC]]
func.func @amax_rows(%x: tensor<7x300xf32>) -> tensor<7xf32> {
  %0 = trn.reduce_max %x dims = [1] : tensor<7x300xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// A leading-dim min gathers columns with strides (no matmul).
// CHECK-LABEL: func.func @amin_leading
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [1, 8], [8, 4]>
// CHECK: nisa.tensor_reduce min
func.func @amin_leading(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %0 = trn.reduce_min %x dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Chunks of a long row reduce with the same op (multiply for prod), one
// group per chunk (no blocking: order does not help a product), into a
// partials column each; the partials reduce once more.
// CHECK-LABEL: func.func @prod_chunked
// CHECK: nisa.tensor_reduce multiply %[[PART:[^ ]*]] <0, [2, 1], [10, 1]>, %{{.*}} <0, [2048, 1], [10, 2048]>
// CHECK: nisa.tensor_reduce multiply %[[PART]] <1, [2, 1], [10, 1]>, %{{.*}} <0, [952, 1], [10, 952]>
// CHECK: nisa.tensor_reduce multiply %[[ACC:[^ ]*]] <0, [1, 1], [10, 1]>, %[[PART]] <0, [2, 1], [10, 2]>
// CHECK: nisa.dma_copy %arg1 <0, [1, 1], [10, 1]>, %[[ACC]]
func.func @prod_chunked(%x: tensor<10x3000xf32>) -> tensor<10xf32> {
  %0 = trn.reduce_prod %x dims = [1] : tensor<10x3000xf32> -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// A row longer than one partials tile holds (2048 partials of 32): the full
// tile reduces as a 32-ary tree and the next tile (2 columns: only as many
// as remain) reduces and adds to it.
// CHECK-LABEL: func.func @sum_partials_flush
// CHECK-COUNT-32: nisa.tensor_reduce add %[[PART:[^ ]*]] <{{[0-9]+}}, [2048, 1], [2, 64]>, %{{.*}} <0, [2048, 32, 1], [2, 64, 32]>
// CHECK: nisa.tensor_reduce add %{{.*}} <0, [64, 1], [2, 64]>, %[[PART]] <0, [2048, 32, 1], [2, 64, 32]>
// CHECK: nisa.tensor_reduce add %{{.*}} <0, [2, 1], [2, 2]>, %{{.*}} <0, [64, 32, 1], [2, 2, 32]>
// CHECK: nisa.tensor_reduce add %[[FIRST:[^ ]*]] <0, [1, 1], [2, 1]>, %{{.*}} <0, [2, 1], [2, 2]>
// CHECK: nisa.tensor_reduce add %[[TAIL:[^ ]*]] <0, [2, 1], [2, 2]>, %{{.*}} <0, [64, 32, 1], [2, 2, 32]>
// CHECK: nisa.tensor_reduce add %[[REST:[^ ]*]] <0, [1, 1], [2, 1]>, %[[TAIL]] <0, [2, 1], [2, 2]>
// CHECK: nisa.tensor_tensor add %[[SUM:[^ ]*]] <0, [1, 1], [2, 1]>, %[[FIRST]] <0, [1, 1], [2, 1]>, %[[REST]] <0, [1, 1], [2, 1]>
// CHECK: nisa.dma_copy %arg1 <0, [1, 1], [2, 1]>, %[[SUM]]
func.func @sum_partials_flush(%x: tensor<2x65600xf32>) -> tensor<2xf32> {
  %0 = trn.reduce_sum %x dims = [1] : tensor<2x65600xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// Fused softmax: max, exp with the negated max as per-partition bias, sum,
// divide by the per-partition sum (tensor_scalar), written in bf16 (the Vector engine casts
// on output: no separate copy).
// CHECK-LABEL: func.func @softmax_bf16
// CHECK: %[[X:.*]] = nisa.alloc : <sbuf, 4, 8, bf16>
// CHECK: nisa.tensor_reduce max %[[M:[^ ]*]] <0, [1, 1], [4, 1]>, %[[X]]
// CHECK: nisa.tensor_scalar %[[NM:[^ ]*]] {{.*}}, %[[M]] {{.*}} multiply -1.0
// CHECK: nisa.activation exp %[[E:[^ ]*]] {{.*}}, %[[X]] {{.*}} bias %[[NM]]
// CHECK: nisa.tensor_reduce add %[[S:[^ ]*]] {{.*}}, %[[E]]
// CHECK: nisa.tensor_scalar %[[O:[^ ]*]] <0, [8, 1], [4, 8]>, %[[E]] <0, [8, 1], [4, 8]> divide 0.000000e+00 per_partition %[[S]] <0, [1, 1], [4, 1]>, bypass 0.000000e+00 on vector : <sbuf, 4, 8, bf16>
// CHECK-NOT: nisa.tensor_copy
// CHECK: nisa.dma_copy %arg1 <0, [8, 1], [4, 8]>, %[[O]]
func.func @softmax_bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = trn.softmax %x dim = 1 : tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// log_softmax over the leading dim: rows are gathered with strides; the
// result is (x - max) - log(sum), in eager's order, both subtractions
// tensor_scalars with a per-partition operand (Vector or GpSimd: the
// Scalar Engine keeps only the exponentials and the log).
// CHECK-LABEL: func.func @log_softmax_dim0
// CHECK: nisa.dma_copy %[[X:[^ ]*]] <0, [4, 1], [8, 4]>, %arg0 <0, [1, 8], [8, 4]>
// CHECK: nisa.tensor_scalar %[[NM:[^ ]*]] {{.*}} multiply -1.0
// CHECK: nisa.activation log %[[L:[^ ]*]]
// CHECK: nisa.tensor_scalar %[[T:[^ ]*]] {{.*}}, %[[X]] <0, [4, 1], [8, 4]> add 0.000000e+00 per_partition %[[NM]]
// CHECK: nisa.tensor_scalar %[[O:[^ ]*]] <0, [4, 1], [8, 4]>, %[[T]] <0, [4, 1], [8, 4]> subtract 0.000000e+00 per_partition %[[L]] <0, [1, 1], [8, 1]>, bypass 0.000000e+00 on vector
// CHECK: nisa.dma_copy %arg1 <0, [1, 8], [8, 4]>, %[[O]]
func.func @log_softmax_dim0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = trn.softmax %x dim = 0 log : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A long log_softmax row (5000 > kLogSoftmaxChunk = 2048) keeps its fp32
// exponentials a column chunk at a time (2048, 2048, 904): the chunks' sums
// go to columns of a partial tile summed once, then each chunk of the
// shifted row is written into its columns of the one output tile.
// CHECK-LABEL: func.func @log_softmax_long_row
// CHECK: nisa.dma_copy %[[X:[^ ]*]] <0, [5000, 1], [4, 5000]>, %arg0
// CHECK: nisa.tensor_scalar %[[NM:[^ ]*]] {{.*}} multiply -1.0
// CHECK: %[[P:.*]] = nisa.alloc : <sbuf, 4, 3, f32>
// CHECK: nisa.activation exp %[[E0:[^ ]*]] <0, [2048, 1], [4, 2048]>, %[[X]] <0, [5000, 1], [4, 2048]> bias %[[NM]]
// CHECK: nisa.tensor_reduce add %[[P]] <0, [3, 1], [4, 1]>, %[[E0]]
// CHECK: nisa.activation exp %[[E1:[^ ]*]] <0, [2048, 1], [4, 2048]>, %[[X]] <2048, [5000, 1], [4, 2048]> bias %[[NM]]
// CHECK: nisa.tensor_reduce add %[[P]] <1, [3, 1], [4, 1]>, %[[E1]]
// CHECK: nisa.activation exp %[[E2:[^ ]*]] <0, [904, 1], [4, 904]>, %[[X]] <4096, [5000, 1], [4, 904]> bias %[[NM]]
// CHECK: nisa.tensor_reduce add %[[P]] <2, [3, 1], [4, 1]>, %[[E2]]
// CHECK: nisa.tensor_reduce add %[[S:[^ ]*]] <0, [1, 1], [4, 1]>, %[[P]] <0, [3, 1], [4, 3]>
// CHECK: nisa.activation log %[[L:[^ ]*]] {{.*}}, %[[S]]
// CHECK: nisa.tensor_scalar %[[T0:[^ ]*]] {{.*}}, %[[X]] <0, [5000, 1], [4, 2048]> add 0.000000e+00 per_partition %[[NM]]
// CHECK: nisa.tensor_scalar %[[O:[^ ]*]] <0, [5000, 1], [4, 2048]>, %[[T0]] {{.*}} subtract 0.000000e+00 per_partition %[[L]]
// CHECK: nisa.tensor_scalar %[[T1:[^ ]*]] {{.*}}, %[[X]] <2048, [5000, 1], [4, 2048]> add 0.000000e+00 per_partition %[[NM]]
// CHECK: nisa.tensor_scalar %[[O]] <2048, [5000, 1], [4, 2048]>, %[[T1]]
// CHECK: nisa.tensor_scalar %[[T2:[^ ]*]] {{.*}}, %[[X]] <4096, [5000, 1], [4, 904]> add 0.000000e+00 per_partition %[[NM]]
// CHECK: nisa.tensor_scalar %[[O]] <4096, [5000, 1], [4, 904]>, %[[T2]]
// CHECK: nisa.dma_copy %arg1 <0, [5000, 1], [4, 5000]>, %[[O]]
func.func @log_softmax_long_row(%x: tensor<4x5000xf32>) -> tensor<4x5000xf32> {
  %0 = trn.softmax %x dim = 1 log : tensor<4x5000xf32>
  return %0 : tensor<4x5000xf32>
}

// A sum over a few long rows (a position embedding's gradient summed over a
// batch of 4) spreads the kept elements over all 128 partitions and adds the
// rows on Vector in fp32, one [128, 1024] load per row: no Tensor Engine
// ones-vector with 4-partition, 512-column tiles.
// CHECK-LABEL: func.func @sum_few_rows
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %[[ACC:[0-9]+]] <0, [1024, 1], [128, 1024]>, %arg0 <0, [1024, 1], [128, 1024]> : !nisa.tile<sbuf, 128, 1024, f32>
// CHECK: nisa.dma_copy %[[R1:[0-9]+]] <0, [1024, 1], [128, 1024]>, %arg0 <131072, [1024, 1], [128, 1024]>
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]] {{.*}}, %[[R1]] {{.*}} on vector
// CHECK-COUNT-2: nisa.tensor_tensor add %[[ACC]]
// CHECK: nisa.tensor_copy %[[OUT:[0-9]+]] {{.*}}, %[[ACC]] {{.*}} : <sbuf, 128, 1024, bf16>, <sbuf, 128, 1024, f32>
// CHECK: nisa.dma_copy %arg1 <0, [1024, 1], [128, 1024]>, %[[OUT]]
func.func @sum_few_rows(%x: tensor<4x131072xbf16>) -> tensor<131072xbf16> {
  %0 = trn.reduce_sum %x dims = [0] : tensor<4x131072xbf16> -> tensor<131072xbf16>
  return %0 : tensor<131072xbf16>
}

// Shorter rows fold too when that moves fewer transfers than the Tensor
// Engine's per-512-column loads and stores: the demo GPT's position
// embedding gradient, a batch of 2 rows of 32768 fp32, is two [128, 256]
// loads, one add and one store (it was 64 [2, 512] loads, 64 fp32 matmuls
// and 64 stores).
// CHECK-LABEL: func.func @sum_two_rows
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %[[ACC:[0-9]+]] <0, [256, 1], [128, 256]>, %arg0 <0, [256, 1], [128, 256]>
// CHECK: nisa.dma_copy %[[R1:[0-9]+]] <0, [256, 1], [128, 256]>, %arg0 <32768, [256, 1], [128, 256]>
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]] {{.*}}, %[[R1]] {{.*}} on vector
// CHECK-NOT: nisa.tensor_tensor
// CHECK: nisa.dma_copy %arg1 <0, [256, 1], [128, 256]>, %[[ACC]]
func.func @sum_two_rows(%x: tensor<2x32768xf32>) -> tensor<32768xf32> {
  %0 = trn.reduce_sum %x dims = [0] : tensor<2x32768xf32> -> tensor<32768xf32>
  return %0 : tensor<32768xf32>
}

// Eight rows of 1024 stay on the Tensor Engine: folded they would be eight
// [128, 8] loads, against two loads (and stores) of [8, 512].
// CHECK-LABEL: func.func @sum_eight_short_rows
// CHECK-COUNT-2: nisa.matmul
// CHECK-NOT: nisa.tensor_tensor
func.func @sum_eight_short_rows(%x: tensor<8x1024xf32>) -> tensor<1024xf32> {
  %0 = trn.reduce_sum %x dims = [0] : tensor<8x1024xf32> -> tensor<1024xf32>
  return %0 : tensor<1024xf32>
}

// The same layout serves max over the few rows.
// CHECK-LABEL: func.func @amax_few_rows
// CHECK-NOT: nisa.matmul
// CHECK-COUNT-2: nisa.tensor_tensor max {{.*}} <0, [512, 1], [128, 512]>{{.*}} on vector
func.func @amax_few_rows(%x: tensor<3x65536xf32>) -> tensor<65536xf32> {
  %0 = trn.reduce_max %x dims = [0] : tensor<3x65536xf32> -> tensor<65536xf32>
  return %0 : tensor<65536xf32>
}

// A few rows between kept dims (Hiera's q pooling: amax over a stride of 4
// between 96-wide rows, far fewer kept elements than the long-row case above)
// fold on Vector too: each of the 4 rows is one load of whole 96-wide runs,
// not one [128, 4] gather of single elements per 128 kept elements (the
// 3072 kept elements as 12 partitions of two 128-element runs).
// CHECK-LABEL: func.func @amax_middle_few_rows
// CHECK-NOT: nisa.tensor_reduce
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [128, 6144, 1], [12, 2, 128]>
// CHECK-COUNT-3: nisa.tensor_tensor max
// CHECK-NOT: nisa.tensor_reduce
func.func @amax_middle_few_rows(%x: tensor<2x4x16x96xf32>) -> tensor<2x16x96xf32> {
  %0 = trn.reduce_max %x dims = [1] : tensor<2x4x16x96xf32> -> tensor<2x16x96xf32>
  return %0 : tensor<2x16x96xf32>
}

// A handful of kept elements (fewer than two per partition) keeps the
// per-partition gather: four loads and three adds would cost more than one
// strided load.
// CHECK-LABEL: func.func @sum_middle_tiny
// CHECK: nisa.tensor_reduce add
func.func @sum_middle_tiny(%x: tensor<2x4x8xf32>) -> tensor<2x8xf32> {
  %0 = trn.reduce_sum %x dims = [1] : tensor<2x4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// A mean over 96 channels of an NCHW map (1024 kept elements per image, fewer
// than partitions x rows): the channels fold on Vector, one load per channel.
// CHECK-LABEL: func.func @sum_channels
// CHECK-NOT: nisa.tensor_reduce
// CHECK-COUNT-95: nisa.tensor_tensor add
// CHECK-NOT: nisa.tensor_reduce
func.func @sum_channels(%x: tensor<8x96x1024xf32>) -> tensor<8x1024xf32> {
  %0 = trn.reduce_sum %x dims = [1] : tensor<8x96x1024xf32> -> tensor<8x1024xf32>
  return %0 : tensor<8x1024xf32>
}

// Four 128-row tiles of kept elements, each reduced on its own: one loop,
// whose body reads a window of x moving 128 rows and writes a window of the
// result moving 128 elements per iteration.
// CHECK-LABEL: func.func @rows_sum_loop
// CHECK: scf.for %[[I:[a-z0-9]+]] = %c0 to %c4 step %c1 {
// CHECK-DAG: %[[X:[0-9]+]] = nisa.hbm_window %arg0[%[[I]] * 8192] : memref<32768xf32>
// CHECK-DAG: %[[Y:[0-9]+]] = nisa.hbm_window %arg1[%[[I]] * 128] : memref<512xf32>
// CHECK: nisa.dma_copy %{{.*}} <0, [64, 1], [128, 64]>, %[[X]] <0, [64, 1], [128, 64]>
// CHECK: nisa.tensor_reduce add
// CHECK: nisa.dma_copy %[[Y]] <0, [1, 1], [128, 1]>
// CHECK-NEXT: }
func.func @rows_sum_loop(%x: tensor<512x64xf32>) -> tensor<512xf32> {
  %0 = trn.reduce_sum %x dims = [1] : tensor<512x64xf32> -> tensor<512xf32>
  return %0 : tensor<512xf32>
}
