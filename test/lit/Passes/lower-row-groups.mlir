// Ops on the rows of one [K..., N] space lower as one row group: per tile of
// 128 rows each input is loaded once, the row reductions fold on Vector into
// [P, 1] tiles that later ops read broadcast along the row (stride 0), sums
// over the rows accumulate in PSUM across the tiles, and only values read
// outside the group are stored. The checks read the loops unrolled
// (trnc-unroll-tile-loops); LOOP shows one as the tile phase emits it.
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | FileCheck %s
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa | FileCheck %s --check-prefix=LOOP
// The output must pass the nisa verifiers when read back.
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa | trnc-opt -split-input-file > /dev/null
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa -canonicalize | FileCheck %s --check-prefix=FOLD

// Layer norm forward (mean, centred variance, normalise, scale, shift): x
// is loaded once per tile, cast in the DMA; the mean is read broadcast; the
// result is computed straight in bf16 (the convert is fused); the weight
// row is loaded once for all tiles (partition stride 0); only y, mean and
// rstd reach HBM.
// CHECK-LABEL: func.func @layer_norm
// CHECK-COUNT-1: nisa.dram_alloc : memref<256xf32>
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %[[X:[0-9]+]] <0, [256, 1], [128, 256]>, %arg2 <0, [256, 1], [128, 256]> : !nisa.tile<sbuf, 128, 256, f32>, memref<65536xbf16>
// CHECK: nisa.tensor_reduce add %{{.*}}, %[[X]] <0, [256, 32, 1], [128, 8, 32]>
// CHECK: nisa.tensor_reduce add %[[S:[0-9]+]] <0, [1, 1], [128, 1]>
// CHECK: nisa.tensor_scalar %[[MEAN:[0-9]+]] {{.*}}, %[[S]] {{.*}} multiply 3.906250e-03
// CHECK: nisa.tensor_scalar %[[C:[0-9]+]] {{.*}}, %[[X]] <0, [256, 1], [128, 256]> subtract 0.000000e+00 per_partition %[[MEAN]] <0, [1, 1], [128, 1]>
// CHECK: nisa.activation rsqrt %[[R:[0-9]+]]
// CHECK: nisa.tensor_scalar %[[N:[0-9]+]] {{.*}}, %[[C]] {{.*}} multiply 0.000000e+00 per_partition %[[R]] <0, [1, 1], [128, 1]>
// CHECK: nisa.dma_copy %[[W:[0-9]+]] <0, [256, 1], [128, 256]>, %{{.*}} <0, [0, 1], [128, 256]>
// CHECK: nisa.tensor_tensor multiply %[[Y:[0-9]+]] {{.*}}, %[[N]] {{.*}}, %[[W]] {{.*}} : <sbuf, 128, 256, bf16>
// CHECK: nisa.dma_copy %arg4 <0, [1, 1], [128, 1]>, %[[MEAN]]
// CHECK: nisa.dma_copy %arg5 <0, [1, 1], [128, 1]>, %[[R]]
// CHECK: nisa.dma_copy %arg3 <0, [256, 1], [128, 256]>, %[[Y]]
// The second tile reuses the weight row.
// CHECK: nisa.dma_copy %{{.*}}, %arg2 <32768, [256, 1], [128, 256]>
// CHECK-NOT: <0, [0, 1], [128, 256]>
// CHECK: nisa.dma_copy %arg3 <32768, [256, 1], [128, 256]>
// CHECK: return
func.func @layer_norm(%w: tensor<256xf32>, %unused: tensor<256xf32>, %x: tensor<256x256xbf16>) -> (tensor<256x256xbf16>, tensor<256x1xf32>, tensor<256x1xf32>) {
  %0 = trn.convert %x : tensor<256x256xbf16> -> tensor<256x256xf32>
  %1 = trn.reduce_sum %0 dims = [1] : tensor<256x256xf32> -> tensor<256xf32>
  %2 = trn.reshape %1 : tensor<256xf32> -> tensor<256x1xf32>
  %3 = trn.mul_scalar %2, 3.906250e-03 : tensor<256x1xf32>
  %4 = trn.broadcast %3 : tensor<256x1xf32> -> tensor<256x256xf32>
  %5 = trn.sub %0, %4 : tensor<256x256xf32>
  %6 = trn.mul %5, %5 : tensor<256x256xf32>
  %7 = trn.reduce_sum %6 dims = [1] : tensor<256x256xf32> -> tensor<256xf32>
  %8 = trn.reshape %7 : tensor<256xf32> -> tensor<256x1xf32>
  %9 = trn.mul_scalar %8, 3.906250e-03 : tensor<256x1xf32>
  %10 = trn.add_scalar %9, 1.000000e-05 : tensor<256x1xf32>
  %11 = trn.rsqrt %10 : tensor<256x1xf32>
  %12 = trn.broadcast %11 : tensor<256x1xf32> -> tensor<256x256xf32>
  %13 = trn.mul %5, %12 : tensor<256x256xf32>
  %14 = trn.exp %w : tensor<256xf32>
  %15 = trn.broadcast %14 : tensor<256xf32> -> tensor<256x256xf32>
  %16 = trn.mul %13, %15 : tensor<256x256xf32>
  %17 = trn.convert %16 : tensor<256x256xf32> -> tensor<256x256xbf16>
  return %17, %3, %11 : tensor<256x256xbf16>, tensor<256x1xf32>, tensor<256x1xf32>
}

// -----

// Sums over the rows (a layer norm's weight and bias gradients) take each
// tile as the stationary operand of one matmul per 128 columns with a
// column of ones (tile^T @ ones), accumulated in one PSUM tile of [128, 8]
// over the tiles (the first starts the group), copied out once and stored
// one element per partition.
// CHECK-LABEL: func.func @sums_over_rows
// CHECK: nisa.memset %[[ONES:[0-9]+]] <0, [1, 1], [128, 1]>, 1.000000e+00
// CHECK: nisa.tensor_reduce add
// CHECK: nisa.tensor_tensor multiply %[[P:[0-9]+]]
// CHECK: nisa.matmul %[[A:[0-9]+]] <0, [8, 1], [128, 1]>, %[[P]] <0, [1024, 1], [128, 128]>, %[[ONES]] <0, [1, 1], [128, 1]> : <psum, 128, 8, f32>
// CHECK: nisa.matmul %[[A]] <7, [8, 1], [128, 1]>, %[[P]] <896, [1024, 1], [128, 128]>, %[[ONES]]
// CHECK-NOT: accumulate
// CHECK: nisa.matmul %[[A]] <0, [8, 1], [128, 1]>, {{.*}} accumulate
// CHECK: nisa.matmul %[[A]] <7, [8, 1], [128, 1]>, {{.*}} accumulate
// CHECK: nisa.tensor_copy %[[O:[0-9]+]] <0, [8, 1], [128, 8]>, %[[A]] {{.*}} on scalar : <sbuf, 128, 8, f32>, <psum, 128, 8, f32>
// CHECK: nisa.dma_copy %arg3 <0, [1, 128], [128, 8]>, %[[O]]
func.func @sums_over_rows(%dy: tensor<256x1024xf32>, %x: tensor<256x1024xf32>) -> (tensor<256x1024xf32>, tensor<1024xf32>) {
  %0 = trn.reduce_sum %dy dims = [1] : tensor<256x1024xf32> -> tensor<256xf32>
  %1 = trn.reshape %0 : tensor<256xf32> -> tensor<256x1xf32>
  %2 = trn.broadcast %1 : tensor<256x1xf32> -> tensor<256x1024xf32>
  %3 = trn.sub %dy, %2 : tensor<256x1024xf32>
  %4 = trn.mul %3, %x : tensor<256x1024xf32>
  %5 = trn.reduce_sum %4 dims = [0] : tensor<256x1024xf32> -> tensor<1024xf32>
  return %3, %5 : tensor<256x1024xf32>, tensor<1024xf32>
}

// -----

// A member read outside before the group's end cuts the group there: the
// normalised rows feed a matmul, so the op after it (reading the row sum)
// is not moved past the matmul; the sum is stored for it.
// CHECK-LABEL: func.func @cut_before_reader
// CHECK: nisa.tensor_reduce add
// CHECK: nisa.tensor_scalar {{.*}} subtract 0.000000e+00 per_partition
// CHECK: nisa.dma_copy %[[SUM:[0-9]+]] <0, [1, 1], [128, 1]>
// CHECK: nisa.matmul
// CHECK: nisa.dma_copy %{{.*}}, %[[SUM]] <0, [1, 1], [128, 1]>
// CHECK: nisa.tensor_scalar {{.*}} multiply 2.0
// CHECK: return
func.func @cut_before_reader(%x: tensor<128x128xf32>, %w: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x1xf32>) {
  %0 = trn.reduce_sum %x dims = [1] : tensor<128x128xf32> -> tensor<128xf32>
  %1 = trn.reshape %0 : tensor<128xf32> -> tensor<128x1xf32>
  %2 = trn.broadcast %1 : tensor<128x1xf32> -> tensor<128x128xf32>
  %3 = trn.sub %x, %2 : tensor<128x128xf32>
  %4 = trn.matmul %3, %w : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %5 = trn.mul_scalar %1, 2.0 : tensor<128x1xf32>
  return %4, %5 : tensor<128x128xf32>, tensor<128x1xf32>
}

// -----

// Rows too long for the tiles a group keeps live (x, exp, sin, cos and their
// sum, 9000 fp32 elements each, are live together: 180 KB, more than two
// thirds of a partition) are not one loop: the reduction's input goes
// through HBM. The elementwise members still share loops: the ops before
// the reduction are one (x loaded once, six values stored, where op by op
// eleven intermediates would each get a scratch), the ops after it another.
// CHECK-LABEL: func.func @rows_too_long
// CHECK-COUNT-6: nisa.dram_alloc : memref<18000xf32>
// CHECK-NOT: nisa.dram_alloc : memref<18000xf32>
// CHECK: nisa.dma_copy {{.*}}, %arg0
// CHECK-NOT: nisa.dma_copy {{.*}}, %arg0 <0,
// CHECK: return
func.func @rows_too_long(%x: tensor<2x9000xf32>) -> tensor<2x9000xf32> {
  %0 = trn.exp %x : tensor<2x9000xf32>
  %1 = trn.sin %x : tensor<2x9000xf32>
  %2 = trn.cos %x : tensor<2x9000xf32>
  %3 = trn.mul %0, %1 : tensor<2x9000xf32>
  %4 = trn.reduce_sum %3 dims = [1] : tensor<2x9000xf32> -> tensor<2xf32>
  %5 = trn.reshape %4 : tensor<2xf32> -> tensor<2x1xf32>
  %6 = trn.broadcast %5 : tensor<2x1xf32> -> tensor<2x9000xf32>
  %7 = trn.add %0, %1 : tensor<2x9000xf32>
  %8 = trn.add %7, %2 : tensor<2x9000xf32>
  %9 = trn.sub %8, %x : tensor<2x9000xf32>
  %10 = trn.add %9, %6 : tensor<2x9000xf32>
  %11 = trn.mul %10, %0 : tensor<2x9000xf32>
  %12 = trn.mul %11, %1 : tensor<2x9000xf32>
  %13 = trn.mul %12, %2 : tensor<2x9000xf32>
  %14 = trn.mul %13, %7 : tensor<2x9000xf32>
  return %14 : tensor<2x9000xf32>
}

// -----

// A scalar op read by one op is computed just before that reader (a layer
// norm gradient's N * g - sum(g), with g * x computed and reduced between):
// g * x then takes a tile of its own instead of overwriting g, and the
// multiply and the per-partition subtraction are one tensor_scalar once
// canonicalized (FOLD).
// CHECK-LABEL: func.func @scalar_op_beside_its_reader
// CHECK: nisa.dma_copy %[[G:[0-9]+]] {{.*}}, %arg0
// CHECK-NOT: nisa.tensor_tensor multiply %[[G]] 
// CHECK: nisa.tensor_tensor multiply %{{[0-9]+}} {{.*}}, %[[G]]
// CHECK: nisa.tensor_scalar %[[N:[0-9]+]] {{.*}}, %[[G]] {{.*}} multiply 5.120000e+02, bypass
// CHECK-NEXT: nisa.tensor_scalar %[[N]] {{.*}}, %[[N]] {{.*}} subtract 0.000000e+00 per_partition
// FOLD-LABEL: func.func @scalar_op_beside_its_reader
// FOLD: nisa.tensor_scalar {{.*}} multiply 5.120000e+02, subtract 0.000000e+00 per_partition
func.func @scalar_op_beside_its_reader(%g: tensor<128x512xf32>, %x: tensor<128x512xf32>) -> tensor<128x512xf32> {
  %n = trn.mul_scalar %g, 5.120000e+02 : tensor<128x512xf32>
  %s = trn.reduce_sum %g dims = [1] : tensor<128x512xf32> -> tensor<128xf32>
  %s1 = trn.reshape %s : tensor<128xf32> -> tensor<128x1xf32>
  %sb = trn.broadcast %s1 : tensor<128x1xf32> -> tensor<128x512xf32>
  %p = trn.mul %g, %x : tensor<128x512xf32>
  %t = trn.reduce_sum %p dims = [1] : tensor<128x512xf32> -> tensor<128xf32>
  %t1 = trn.reshape %t : tensor<128xf32> -> tensor<128x1xf32>
  %tb = trn.broadcast %t1 : tensor<128x1xf32> -> tensor<128x512xf32>
  %d = trn.sub %n, %sb : tensor<128x512xf32>
  %e = trn.mul %x, %tb : tensor<128x512xf32>
  %r = trn.sub %d, %e : tensor<128x512xf32>
  return %r : tensor<128x512xf32>
}

// -----

// A one-instruction op that is the last reader of a [P, N] tile writes its
// result over it (softmax's normalisation overwrites the exponentials); a
// select, which writes before it reads all operands, never does.
// CHECK-LABEL: func.func @in_place
// CHECK: nisa.activation exp %[[E:[0-9]+]]
// CHECK: nisa.tensor_scalar %[[E]] <0, [512, 1], [128, 512]>, %[[E]] <0, [512, 1], [128, 512]> divide 0.000000e+00 per_partition %{{[0-9]+}} <0, [1, 1], [128, 1]>
// CHECK: nisa.tensor_copy %[[SEL:[0-9]+]]
// CHECK-NOT: %[[E]]
// CHECK: nisa.copy_predicated %[[SEL]]
func.func @in_place(%x: tensor<128x512xf32>, %m: tensor<128x512xi1>) -> tensor<128x512xf32> {
  %0 = trn.exp %x : tensor<128x512xf32>
  %1 = trn.reduce_sum %0 dims = [1] : tensor<128x512xf32> -> tensor<128xf32>
  %2 = trn.reshape %1 : tensor<128xf32> -> tensor<128x1xf32>
  %3 = trn.broadcast %2 : tensor<128x1xf32> -> tensor<128x512xf32>
  %4 = trn.div %0, %3 : tensor<128x512xf32>
  %5 = trn.select %m, %4, %x : tensor<128x512xi1>, tensor<128x512xf32>
  return %5 : tensor<128x512xf32>
}

// -----

// An alias of a value from outside the group (a reshaped argument, then
// broadcast along the rows) is an outside view, not a member: the eq reads
// it as an input loaded once per row (the shape of amax's gradient).
// CHECK-LABEL: func.func @alias_of_outside_value
// CHECK: nisa.dma_copy %[[M:[0-9]+]] <0, [1, 1], [6, 1]>, %arg1
// CHECK: nisa.tensor_scalar %{{[0-9]+}} {{.*}} is_equal 0.000000e+00 per_partition %[[M]] <0, [1, 1], [6, 1]>
// CHECK: return
func.func @alias_of_outside_value(%x: tensor<3x2x1x2xf32>, %m: tensor<3x2x1xf32>) -> tensor<3x2x1xf32> {
  %0 = trn.reshape %m : tensor<3x2x1xf32> -> tensor<3x2x1x1xf32>
  %1 = trn.broadcast %0 : tensor<3x2x1x1xf32> -> tensor<3x2x1x2xf32>
  %2 = trn.eq %1, %x : tensor<3x2x1x2xf32> -> tensor<3x2x1x2xi1>
  %3 = trn.convert %2 : tensor<3x2x1x2xi1> -> tensor<3x2x1x2xf32>
  %4 = trn.reduce_sum %3 dims = [3] : tensor<3x2x1x2xf32> -> tensor<3x2x1xf32>
  %5 = trn.mul %4, %m : tensor<3x2x1xf32>
  return %5 : tensor<3x2x1xf32>
}

// -----

// A member read by another through a view that is not a member (a row sum
// broadcast along the other axis, as sort's ranks are) cuts the group: the
// sum is stored first, and the ops reading its view form their own group.
// CHECK-LABEL: func.func @member_through_outside_view
// CHECK: nisa.dram_alloc : memref<4xf32>
// CHECK: nisa.tensor_reduce add
// CHECK: nisa.dma_copy %[[SUM:[0-9]+]] <0, [1, 1], [4, 1]>
// CHECK: nisa.dma_copy %{{[0-9]+}} {{.*}}, %[[SUM]] <0, [0, 1], [4, 4]>
// CHECK: nisa.tensor_tensor subtract
// CHECK: return
func.func @member_through_outside_view(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %0 = trn.exp %x : tensor<4x4xf32>
  %1 = trn.reduce_sum %0 dims = [1] : tensor<4x4xf32> -> tensor<4xf32>
  %2 = trn.reshape %1 : tensor<4xf32> -> tensor<1x4xf32>
  %3 = trn.broadcast %2 : tensor<1x4xf32> -> tensor<4x4xf32>
  %4 = trn.sub %x, %3 : tensor<4x4xf32>
  %5 = trn.reduce_sum %4 dims = [1] : tensor<4x4xf32> -> tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// A sum over rows of 200 columns: a block of 128 and one of 72 (a second
// matmul with a narrower stationary, stored apart), and a sum of the row
// sums to a scalar (a [128, 1] stationary, a [1, 1] accumulator), over two
// full tiles and a last of 44 rows.
// CHECK-LABEL: func.func @sums_over_rows_partial_block
// CHECK: nisa.memset %[[ONES:[0-9]+]] <0, [1, 1], [128, 1]>, 1.000000e+00 {{.*}} : <sbuf, 128, 1, bf16>
// CHECK: nisa.matmul %[[C:[0-9]+]] <0, [2, 1], [128, 1]>, %[[E:[0-9]+]] <0, [200, 1], [128, 128]>, %[[ONES]] <0, [1, 1], [128, 1]> : <psum, 128, 2, f32>
// CHECK: nisa.matmul %[[C]] <1, [2, 1], [72, 1]>, %[[E]] <128, [200, 1], [128, 72]>, %[[ONES]]
// CHECK: nisa.matmul %[[S:[0-9]+]] <0, [1, 1], [1, 1]>, %{{[0-9]+}} <0, [1, 1], [128, 1]>, %[[ONES]] <0, [1, 1], [128, 1]> : <psum, 1, 1, f32>
// CHECK: nisa.matmul %[[C]] <1, [2, 1], [72, 1]>, %{{[0-9]+}} <128, [200, 1], [44, 72]>, %[[ONES]] <0, [1, 1], [44, 1]> accumulate
// CHECK: nisa.matmul %[[S]] <0, [1, 1], [1, 1]>, %{{[0-9]+}} <0, [1, 1], [44, 1]>, %[[ONES]] <0, [1, 1], [44, 1]> accumulate
// CHECK: nisa.dma_copy %arg1 <0, [1, 128], [128, 1]>
// CHECK: nisa.dma_copy %arg1 <128, [1, 1], [72, 1]>
// CHECK: nisa.dma_copy %arg2 <0, [1, 1], [1, 1]>
func.func @sums_over_rows_partial_block(%x: tensor<300x200xbf16>) -> (tensor<200xbf16>, tensor<bf16>) {
  %0 = trn.exp %x : tensor<300x200xbf16>
  %1 = trn.reduce_sum %0 dims = [0] : tensor<300x200xbf16> -> tensor<200xbf16>
  %2 = trn.reduce_sum %0 dims = [1] : tensor<300x200xbf16> -> tensor<300xbf16>
  %3 = trn.reduce_sum %2 dims = [0] : tensor<300xbf16> -> tensor<bf16>
  return %1, %3 : tensor<200xbf16>, tensor<bf16>
}

// -----

// A widening convert of a group value is no instruction: the reduction and
// the subtract read the bf16 product's tile (the engines compute in fp32).
// CHECK-LABEL: func.func @widened_member
// CHECK: nisa.tensor_tensor multiply %[[M:[0-9]+]] {{.*}} : <sbuf, 128, 64, bf16>
// CHECK-NOT: nisa.tensor_copy
// CHECK: nisa.tensor_reduce add %{{[0-9]+}} {{.*}}, %[[M]]
// CHECK: nisa.tensor_scalar %{{[0-9]+}} {{.*}}, %[[M]] {{.*}} subtract 0.000000e+00 per_partition
// CHECK: return
func.func @widened_member(%x: tensor<256x64xbf16>) -> tensor<256x64xf32> {
  %0 = trn.mul %x, %x : tensor<256x64xbf16>
  %1 = trn.convert %0 : tensor<256x64xbf16> -> tensor<256x64xf32>
  %2 = trn.reduce_sum %1 dims = [1] : tensor<256x64xf32> -> tensor<256xf32>
  %3 = trn.reshape %2 : tensor<256xf32> -> tensor<256x1xf32>
  %4 = trn.broadcast %3 : tensor<256x1xf32> -> tensor<256x64xf32>
  %5 = trn.sub %1, %4 : tensor<256x64xf32>
  return %5 : tensor<256x64xf32>
}

// -----

// An elementwise op on a reshape of the rows that keeps them ([256, 64]
// viewed [2, 128, 64]: a logits gradient plus the logits output's tangent)
// joins the group: the tangent is loaded per task, the sum is stored
// straight to the result, and the [256, 64] value before it is never
// stored.
// CHECK-LABEL: func.func @reshaped_rows
// CHECK: nisa.tensor_reduce add
// CHECK: nisa.tensor_scalar %[[D:[0-9]+]] {{.*}} subtract 0.000000e+00 per_partition
// CHECK: nisa.dma_copy %[[T:[0-9]+]] <0, [64, 1], [128, 64]>, %arg1 <0, [64, 1], [128, 64]>
// CHECK: nisa.tensor_tensor add %{{[0-9]+}} {{.*}}, %[[T]] {{.*}}, %[[D]]
// CHECK: nisa.dma_copy %arg2 <0, [64, 1], [128, 64]>
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @reshaped_rows(%x: tensor<256x64xf32>, %t: tensor<2x128x64xf32>) -> tensor<256x64xf32> {
  %0 = trn.reduce_sum %x dims = [1] : tensor<256x64xf32> -> tensor<256xf32>
  %1 = trn.reshape %0 : tensor<256xf32> -> tensor<256x1xf32>
  %2 = trn.broadcast %1 : tensor<256x1xf32> -> tensor<256x64xf32>
  %3 = trn.sub %x, %2 : tensor<256x64xf32>
  %4 = trn.reshape %3 : tensor<256x64xf32> -> tensor<2x128x64xf32>
  %5 = trn.add %t, %4 : tensor<2x128x64xf32>
  %6 = trn.reshape %5 : tensor<2x128x64xf32> -> tensor<256x64xf32>
  return %6 : tensor<256x64xf32>
}

// -----

// A table added to every batch element (token + position embeddings), then
// the rows' sums: the rows walk [2, 256] with the table's strides [0, 64],
// which do not merge into one dim, so each tile takes 128 rows of one batch
// element (the table's rows again for each element) instead of every op
// going through HBM on its own.
// CHECK-LABEL: func.func @batch_broadcast
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %[[X:[0-9]+]] <0, [64, 1], [128, 64]>, %arg0 <0, [64, 1], [128, 64]>
// CHECK: nisa.dma_copy %[[T:[0-9]+]] <0, [64, 1], [128, 64]>, %arg1 <0, [64, 1], [128, 64]>
// CHECK: nisa.tensor_tensor add %[[X]] {{.*}}, %[[X]] {{.*}}, %[[T]]
// CHECK: nisa.tensor_reduce add %{{.*}}, %[[X]]
// CHECK: nisa.dma_copy %arg2 <0, [64, 1], [128, 64]>, %[[X]]
// CHECK: nisa.dma_copy %arg3 <0, [1, 1], [128, 1]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <8192, [64, 1], [128, 64]>
// CHECK: nisa.dma_copy %{{.*}}, %arg1 <8192, [64, 1], [128, 64]>
// CHECK: nisa.dma_copy %arg3 <128, [1, 1], [128, 1]>
// The second batch element reads the table from its first row again.
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <16384, [64, 1], [128, 64]>
// CHECK: nisa.dma_copy %{{.*}}, %arg1 <0, [64, 1], [128, 64]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <24576, [64, 1], [128, 64]>
// CHECK: nisa.dma_copy %{{.*}}, %arg1 <8192, [64, 1], [128, 64]>
// CHECK: nisa.dma_copy %arg3 <384, [1, 1], [128, 1]>
// CHECK: return
// As loops: the first tile alone (it would start sums over rows in PSUM),
// then tiles 1 to 3 as three iterations of one loop, x's window moving on
// by 8192 elements and the table's by -8192 with period 2 (8192, 0, 8192:
// back where it started every second iteration).
// LOOP-LABEL: func.func @batch_broadcast
// LOOP: nisa.dma_copy %{{.*}}, %arg0 <0, [64, 1], [128, 64]>
// LOOP: scf.for %[[I:[a-z0-9]+]] = %c0 to %c3
// LOOP-DAG: %[[X:[0-9]+]] = nisa.hbm_window %arg0[%[[I]] * 8192]
// LOOP-DAG: %[[T:[0-9]+]] = nisa.hbm_window %arg1[%[[I]] * -8192 period 2]
// LOOP: nisa.dma_copy %{{.*}}, %[[X]] <8192, [64, 1], [128, 64]>
// LOOP: nisa.dma_copy %{{.*}}, %[[T]] <8192, [64, 1], [128, 64]>
// LOOP: }
// LOOP-NOT: nisa.dma_copy %{{.*}}, %arg0
func.func @batch_broadcast(%x: tensor<2x256x64xf32>, %pos: tensor<256x64xf32>) -> (tensor<2x256x64xf32>, tensor<2x256xf32>) {
  %b = trn.broadcast %pos : tensor<256x64xf32> -> tensor<2x256x64xf32>
  %0 = trn.add %x, %b : tensor<2x256x64xf32>
  %1 = trn.reduce_sum %0 dims = [2] : tensor<2x256x64xf32> -> tensor<2x256xf32>
  return %0, %1 : tensor<2x256x64xf32>, tensor<2x256xf32>
}
