// The instructions, the tile loops unrolled (trnc-unroll-tile-loops) and the
// engines placed, as the later phases see them; the LOOP prefix: the loops
// as the tile phase emits them.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | FileCheck %s
// The output must pass the nisa verifiers when read back.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | trnc-opt | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s --check-prefix=LOOP
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt > /dev/null

// A unary op is one Scalar-engine activation per tile.
// CHECK-LABEL: func.func @unary
// CHECK: nisa.activation expm1
func.func @unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = trn.expm1 %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A comparison with a broadcast constant is one tensor_scalar (reversed when
// the constant is the lhs) writing a bool tile; the constant, read only as
// that immediate, is never filled.
// CHECK-LABEL: func.func @compare_scalar
// CHECK-NOT: nisa.memset
// CHECK: nisa.tensor_scalar {{.*}} is_lt 5.000000e-01, bypass 0.000000e+00 on {{vector|gpsimd|scalar}} {reverse0} : <sbuf, {{.*}}, i1>, <sbuf, {{.*}}, f32>
func.func @compare_scalar(%x: tensor<4x8xf32>) -> tensor<4x8xi1> {
  %c = trn.full 0.5 : tensor<f32>
  %b = trn.broadcast %c : tensor<f32> -> tensor<4x8xf32>
  %0 = trn.lt %b, %x : tensor<4x8xf32> -> tensor<4x8xi1>
  return %0 : tensor<4x8xi1>
}

// select: a copy of on_false, then a predicated copy of on_true, both on
// the Vector engine.
// CHECK-LABEL: func.func @select
// CHECK: nisa.tensor_copy %[[O:[0-9]+]] {{.*}} on vector
// CHECK: nisa.copy_predicated %[[O]] {{.*}} on vector : <sbuf, {{.*}}, f32>, <sbuf, {{.*}}, i1>, <sbuf, {{.*}}, f32>
func.func @select(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = trn.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A select of constant zero into bf16 (a masked gradient) fills with a
// memset, which writes zeros into bf16 at twice a copy's rate; into f32,
// where the two cost the same, and for a nonzero or -0.0 constant, the
// copy of on_false stays (the memsets on GpSimd fill the constant's own
// one-element buffer).
// CHECK-LABEL: func.func @select_zero_bf16
// CHECK-NOT: nisa.tensor_copy
// CHECK: nisa.memset %[[O:[0-9]+]] {{.*}}, 0.000000e+00 on vector
// CHECK-NEXT: nisa.copy_predicated %[[O]] {{.*}} : <sbuf, {{.*}}, bf16>, <sbuf, {{.*}}, i1>, <sbuf, {{.*}}, bf16>
func.func @select_zero_bf16(%c: tensor<4x8xi1>, %a: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %z = trn.full 0.0 : tensor<bf16>
  %b = trn.broadcast %z : tensor<bf16> -> tensor<4x8xbf16>
  %0 = trn.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}
// CHECK-LABEL: func.func @select_zero_f32
// CHECK-NOT: nisa.memset {{.*}} on vector
// CHECK: nisa.tensor_copy %[[O:[0-9]+]]
// CHECK: nisa.copy_predicated %[[O]]
func.func @select_zero_f32(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = trn.full 0.0 : tensor<f32>
  %b = trn.broadcast %z : tensor<f32> -> tensor<4x8xf32>
  %0 = trn.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @select_negative_zero_bf16
// CHECK-NOT: nisa.memset {{.*}} on vector
// CHECK: nisa.tensor_copy %[[O:[0-9]+]]
// CHECK: nisa.copy_predicated %[[O]]
func.func @select_negative_zero_bf16(%c: tensor<4x8xi1>, %a: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %z = trn.full -0.0 : tensor<bf16>
  %b = trn.broadcast %z : tensor<bf16> -> tensor<4x8xbf16>
  %0 = trn.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// int64 is computed as int32 on chip: the tile is i32, the DMAs narrow and
// widen.
// CHECK-LABEL: func.func @int64
// CHECK-SAME: memref<32xi64>
// CHECK: nisa.alloc : <sbuf, {{.*}}, i32>
// CHECK: nisa.tensor_tensor floor_divide
func.func @int64(%a: tensor<4x8xi64>, %b: tensor<4x8xi64>) -> tensor<4x8xi64> {
  %0 = trn.floor_div %a, %b : tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// clamp is one tensor_scalar: max with the lower bound, min with the upper.
// CHECK-LABEL: func.func @clamp
// CHECK: nisa.tensor_scalar {{.*}} max -1.000000e+00, min 2.000000e+00
func.func @clamp(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = trn.clamp %x {min = -1.0 : f64, max = 2.0 : f64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A batch of 4 that a broadcast operand keeps from merging with the rows
// ([4, 256*512] against a [256*512] position table) is tiled over all 128
// partitions (each a 1024-element run of every batch), not 4 partitions per
// tile; the table is loaded once and widened over the batch on chip.
// CHECK-LABEL: func.func @add_batch_broadcast
// CHECK: nisa.dma_copy %{{.*}} <0, [4096, 1], [128, 4096]>, %arg0 <0, [1024, 131072, 1], [128, 4, 1024]>
// CHECK: nisa.dma_copy %{{.*}} <0, [1024, 1], [128, 1024]>, %arg1 <0, [1024, 1], [128, 1024]>
// CHECK: nisa.tensor_tensor add {{.*}} <0, [4096, 1], [128, 4096]>
// CHECK: nisa.dma_copy %arg2 <0, [1024, 131072, 1], [128, 4, 1024]>
// CHECK-NOT: nisa.dma_copy
func.func @add_batch_broadcast(%x: tensor<4x256x512xbf16>, %p: tensor<256x512xbf16>) -> tensor<4x256x512xbf16> {
  %b = trn.broadcast %p : tensor<256x512xbf16> -> tensor<4x256x512xbf16>
  %0 = trn.add %x, %b : tensor<4x256x512xbf16>
  return %0 : tensor<4x256x512xbf16>
}

// A batch of 8 of [C, H*W] maps against a per-channel broadcast (batch
// norm's x - mean): with 64 channels, too few to split 128 ways, the
// channels walk 64 partitions (each two maps' 1024-element runs per tile),
// not 8 partitions (one per image) per tile. The per-channel mean is one
// value per partition: loaded as a [64, 1] tile and read as tensor_scalar's
// per-partition operand, never widened to [64, 2048].
// CHECK-LABEL: func.func @sub_channel_mean
// CHECK: nisa.dma_copy %{{.*}} <0, [2048, 1], [64, 2048]>, %arg0 <0, [1024, 65536, 1024, 1], [64, 2, 1, 1024]>
// CHECK: nisa.dma_copy %[[M:[0-9]+]] <0, [1, 1], [64, 1]>, %arg1 <0, [1, 1], [64, 1]>
// CHECK: nisa.tensor_scalar {{.*}} <0, [2048, 1], [64, 2048]> subtract 0.000000e+00 per_partition %[[M]] <0, [1, 1], [64, 1]>
// CHECK-COUNT-3: nisa.tensor_scalar {{.*}} <0, [2048, 1], [64, 2048]> subtract 0.000000e+00 per_partition %[[M]]
// CHECK-NOT: nisa.tensor_tensor
// CHECK-NOT: nisa.tensor_copy
// As the tile phase emits them, the four tiles are the first as it is (it
// loads the mean, the same for every tile) and a loop over the other three,
// whose body is tile 1 reading windows of x and of the result that move
// 131072 elements (two maps of 64 channels) per iteration.
// LOOP-LABEL: func.func @sub_channel_mean
// LOOP: nisa.dma_copy %[[M:[0-9]+]] <0, [1, 1], [64, 1]>, %arg1 <0, [1, 1], [64, 1]>
// LOOP: scf.for %[[I:.*]] = %c0 to %c3 step %c1 {
// LOOP-DAG: %[[Y:[0-9]+]] = nisa.hbm_window %arg2[%[[I]] * 131072] : memref<524288xf32>
// LOOP-DAG: %[[X:[0-9]+]] = nisa.hbm_window %arg0[%[[I]] * 131072] : memref<524288xf32>
// LOOP: nisa.dma_copy %{{.*}} <0, [2048, 1], [64, 2048]>, %[[X]] <131072, [1024, 65536, 1024, 1], [64, 2, 1, 1024]>
// LOOP-NEXT: nisa.alloc
// LOOP-NEXT: nisa.tensor_scalar {{.*}} <0, [2048, 1], [64, 2048]> subtract 0.000000e+00 per_partition %[[M]] <0, [1, 1], [64, 1]>
// LOOP-NEXT: nisa.dma_copy %[[Y]] <131072, [1024, 65536, 1024, 1], [64, 2, 1, 1024]>
// LOOP-NEXT: {{^ +}$}}
// CHECK-NOT: nisa.tensor_tensor
// CHECK-NOT: nisa.tensor_copy
func.func @sub_channel_mean(%x: tensor<8x64x32x32xf32>, %m: tensor<64x1x1xf32>) -> tensor<8x64x32x32xf32> {
  %b = trn.broadcast %m : tensor<64x1x1xf32> -> tensor<8x64x32x32xf32>
  %0 = trn.sub %x, %b : tensor<8x64x32x32xf32>
  return %0 : tensor<8x64x32x32xf32>
}

// 512 channels of 7x7 maps: 4 channels to a partition (196-element runs,
// shorter than a long DMA run but on all 128 partitions): one tile.
// CHECK-LABEL: func.func @mul_channel_short
// CHECK: nisa.dma_copy %{{.*}} <0, [1568, 1], [128, 1568]>, %arg0 <0, [196, 25088, 49, 1], [128, 8, 4, 49]>
// CHECK: nisa.dma_copy %{{.*}} <0, [4, 1], [128, 4]>, %arg1 <0, [4, 1], [128, 4]>
// CHECK: nisa.tensor_tensor multiply {{.*}} <0, [1568, 1], [128, 1568]>
// CHECK: nisa.dma_copy %arg2 <0, [196, 25088, 49, 1], [128, 8, 4, 49]>
// CHECK-NOT: nisa.tensor_tensor
func.func @mul_channel_short(%x: tensor<8x512x7x7xf32>, %m: tensor<512x1x1xf32>) -> tensor<8x512x7x7xf32> {
  %b = trn.broadcast %m : tensor<512x1x1xf32> -> tensor<8x512x7x7xf32>
  %0 = trn.mul %x, %b : tensor<8x512x7x7xf32>
  return %0 : tensor<8x512x7x7xf32>
}

// A stride-2 slice read by an elementwise op (a pooling tap): a direct load
// would be one DMA descriptor per element; the span of each partition's
// 8 x 32 elements (stride 2 throughout) is loaded densely (511 elements,
// one run) and every second element copied out on Vector before the op.
// CHECK-LABEL: func.func @stride_two_slice
// CHECK: nisa.dma_copy %[[SPAN:.*]] <0, [511, 1], [128, 511]>, %arg0 <0, [512, 1], [128, 511]>
// CHECK: nisa.tensor_copy %[[T:.*]] <0, [256, 1], [128, 256]>, %[[SPAN]] <0, [511, 2], [128, 256]> on vector
// CHECK: nisa.activation exp {{.*}}, %[[T]]
func.func @stride_two_slice(%x: tensor<128x8x64xf32>) -> tensor<128x8x32xf32> {
  %0 = trn.slice %x starts = [0, 0, 0] steps = [1, 1, 2] : tensor<128x8x64xf32> -> tensor<128x8x32xf32>
  %1 = trn.exp %0 : tensor<128x8x32xf32>
  return %1 : tensor<128x8x32xf32>
}

// A stride-5 slice is loaded as it is (its dense span would be 5x the bytes).
// CHECK-LABEL: func.func @stride_five_slice
// CHECK-NOT: on vector
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [40, 5], [128, 8]>
// CHECK-NOT: tensor_copy
// CHECK: nisa.activation exp
func.func @stride_five_slice(%x: tensor<128x40xf32>) -> tensor<128x8xf32> {
  %0 = trn.slice %x starts = [0, 0] steps = [1, 5] : tensor<128x40xf32> -> tensor<128x8xf32>
  %1 = trn.exp %0 : tensor<128x8xf32>
  return %1 : tensor<128x8xf32>
}

// An elementwise group of 4 tiles, lowered as a loop and unrolled: each
// load and store at its tile's offset, as if emitted one by one.
// CHECK-LABEL: func.func @lowered
// CHECK-NOT: scf.for
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [2048, 1], [128, 2048]>
// CHECK: nisa.dma_copy %arg1 <0, [2048, 1], [128, 2048]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <262144, [2048, 1], [128, 2048]>
// CHECK: nisa.dma_copy %arg1 <262144, [2048, 1], [128, 2048]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <524288, [2048, 1], [128, 2048]>
// CHECK: nisa.dma_copy %arg1 <524288, [2048, 1], [128, 2048]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <786432, [2048, 1], [128, 2048]>
// CHECK: nisa.dma_copy %arg1 <786432, [2048, 1], [128, 2048]>
// CHECK-NOT: nisa.dma_copy
func.func @lowered(%x: tensor<512x2048xf32>) -> tensor<512x2048xf32> {
  %0 = trn.exp %x : tensor<512x2048xf32>
  return %0 : tensor<512x2048xf32>
}

// Rows of 10000 of a 12000-wide input: per 128-row block four 2048-wide
// tiles and a 1808-wide one. Each loop's first iteration is emitted as it
// is, then a loop over the others: the first row block (its first column
// tile, a loop over the three others, the narrow tile), then a loop over the
// three other row blocks (windows moving 128 rows of each view), whose body
// is row block 1 with the same column structure inside (windows of those
// windows moving 2048 elements).
// LOOP-LABEL: func.func @ragged
// LOOP: nisa.dma_copy %{{.*}} <0, [2048, 1], [128, 2048]>, %arg0 <0, [12000, 1], [128, 2048]>
// LOOP: scf.for %{{[a-z0-9]+}} = %c0 to %c3 step %c1 {
// LOOP: nisa.dma_copy %{{.*}} <0, [1808, 1], [128, 1808]>, %arg0 <8192, [12000, 1], [128, 1808]>
// LOOP: scf.for %[[I:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// LOOP-DAG: %[[Y:[0-9]+]] = nisa.hbm_window %arg1[%[[I]] * 1280000]
// LOOP-DAG: %[[X:[0-9]+]] = nisa.hbm_window %arg0[%[[I]] * 1536000]
// LOOP: nisa.dma_copy %{{.*}} <0, [2048, 1], [128, 2048]>, %[[X]] <1536000, [12000, 1], [128, 2048]>
// LOOP: scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// LOOP-DAG: %[[YJ:[0-9]+]] = nisa.hbm_window %[[Y]][%[[J]] * 2048]
// LOOP-DAG: %[[XJ:[0-9]+]] = nisa.hbm_window %[[X]][%[[J]] * 2048]
// LOOP: nisa.dma_copy %{{.*}} <0, [2048, 1], [128, 2048]>, %[[XJ]] <1538048, [12000, 1], [128, 2048]>
// LOOP: nisa.activation exp
// LOOP: nisa.dma_copy %[[YJ]] <1282048, [10000, 1], [128, 2048]>
// LOOP-NEXT: {{^ +}$}}
// LOOP: nisa.dma_copy %{{.*}} <0, [1808, 1], [128, 1808]>, %[[X]] <1544192, [12000, 1], [128, 1808]>
// LOOP: nisa.dma_copy %[[Y]] <1288192, [10000, 1], [128, 1808]>
// LOOP-NEXT: {{^ +}$}}
// CHECK-LABEL: func.func @ragged
// CHECK-COUNT-20: nisa.activation exp
// CHECK-NOT: nisa.activation
func.func @ragged(%x: tensor<512x12000xf32>) -> tensor<512x10000xf32> {
  %s = trn.slice %x starts = [0, 0] steps = [1, 1] : tensor<512x12000xf32> -> tensor<512x10000xf32>
  %0 = trn.exp %s : tensor<512x10000xf32>
  return %0 : tensor<512x10000xf32>
}

// A bias row broadcast over 512 rows, two 2048-wide chunks per row block:
// the first row block, emitted as it is, loads both chunks of the bias;
// the loop over the three other row blocks reads them from outside (its
// body is the two chunks).
// LOOP-LABEL: func.func @bias_rows
// LOOP: nisa.dma_copy %[[B0:[0-9]+]] <0, [2048, 1], [128, 2048]>, %arg1 <0, [0, 1], [128, 2048]>
// LOOP: nisa.dma_copy %[[B1:[0-9]+]] <0, [2048, 1], [128, 2048]>, %arg1 <2048, [0, 1], [128, 2048]>
// LOOP: scf.for %{{.*}} = %c0 to %c3 step %c1 {
// LOOP-NOT: %arg1
// LOOP: nisa.tensor_tensor add {{.*}}, %[[B0]]
// LOOP-NOT: %arg1
// LOOP: nisa.tensor_tensor add {{.*}}, %[[B1]]
// LOOP: }
func.func @bias_rows(%x: tensor<512x4096xf32>, %b: tensor<4096xf32>) -> tensor<512x4096xf32> {
  %bb = trn.broadcast %b : tensor<4096xf32> -> tensor<512x4096xf32>
  %0 = trn.add %x, %bb : tensor<512x4096xf32>
  return %0 : tensor<512x4096xf32>
}
