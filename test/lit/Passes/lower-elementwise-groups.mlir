// Elementwise ops of one shape lower as one fusion group: one loop over
// tiles, each input loaded once (a widening convert of a 16-bit float input
// is read from its narrow tile; another convert of an input is the load's
// cast), only results read outside the group stored.
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa | FileCheck %s

// A bf16 chain computed in fp32 (the shape of a GELU backward): two bf16
// loads (the engines widen them on read: a casting DMA would move twice
// the bytes), one store, no HBM scratch. The last op writes bf16 itself
// (the engines compute in fp32 and round on output: the final convert is
// the same value without its own copy).
// CHECK-LABEL: func.func @chain
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %[[A:[0-9]+]] {{.*}}, %arg0 {{.*}} : !nisa.tile<sbuf, 128, 512, bf16>, memref<65536xbf16>
// CHECK: nisa.dma_copy %[[B:[0-9]+]] {{.*}}, %arg1 {{.*}} : !nisa.tile<sbuf, 128, 512, bf16>, memref<65536xbf16>
// CHECK: nisa.tensor_tensor multiply %[[M:[0-9]+]] {{.*}}, %[[A]] {{.*}}, %[[B]]
// CHECK: nisa.tensor_scalar %[[S:[0-9]+]] {{.*}}, %[[M]] {{.*}} add 1.0{{.*}} : <sbuf, 128, 512, bf16>, <sbuf, 128, 512, f32>
// CHECK-NOT: nisa.tensor_copy
// CHECK: nisa.dma_copy %arg2 {{.*}}, %[[S]]
// CHECK-NOT: nisa.dma_copy
// CHECK: return
func.func @chain(%a: tensor<128x512xbf16>, %b: tensor<128x512xbf16>) -> tensor<128x512xbf16> {
  %0 = trn.convert %a : tensor<128x512xbf16> -> tensor<128x512xf32>
  %1 = trn.convert %b : tensor<128x512xbf16> -> tensor<128x512xf32>
  %2 = trn.mul %0, %1 : tensor<128x512xf32>
  %3 = trn.add_scalar %2, 1.0 : tensor<128x512xf32>
  %4 = trn.convert %3 : tensor<128x512xf32> -> tensor<128x512xbf16>
  return %4 : tensor<128x512xbf16>
}

// -----

// tanh moves up to exp's group across the matmul (it reads only exp); the
// add of the matmul's result cannot join (its operand is not lowered yet).
// exp's result is read by the matmul too, so it is stored as well.
// CHECK-LABEL: func.func @moves_up
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.alloc
// CHECK-NEXT: nisa.activation tanh
// CHECK: nisa.matmul
// CHECK: nisa.tensor_tensor add
// CHECK: return
func.func @moves_up(%x: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %0 = trn.exp %x : tensor<128x128xf32>
  %1 = trn.matmul %0, %x : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %2 = trn.tanh %0 : tensor<128x128xf32>
  %3 = trn.add %1, %2 : tensor<128x128xf32>
  return %2, %3 : tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// A group value read outside the group (through a transposed view) is
// stored once and still feeds the group's later op on chip.
// CHECK-LABEL: func.func @escapes
// CHECK: %[[SCRATCH:[0-9]+]] = nisa.dram_alloc
// CHECK: nisa.activation exp %[[E:[0-9]+]]
// CHECK: nisa.activation tanh %{{[0-9]+}} {{.*}}, %[[E]]
// CHECK-DAG: nisa.dma_copy %[[SCRATCH]] {{.*}}, %[[E]]
// CHECK-DAG: nisa.dma_copy %arg1
// CHECK: return
func.func @escapes(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %0 = trn.exp %x : tensor<64x64xf32>
  %1 = trn.tanh %0 : tensor<64x64xf32>
  %2 = trn.transpose %0 permutation = [1, 0] : tensor<64x64xf32> -> tensor<64x64xf32>
  %3 = trn.sigmoid %2 : tensor<64x64xf32>
  return %1, %3 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// The broadcast of a bias comes after exp in program order; as a view it
// costs nothing, so the add joins exp's group: no scratch between them.
// CHECK-LABEL: func.func @late_broadcast
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.activation exp %[[E:[0-9]+]]
// CHECK: nisa.tensor_tensor add %{{[0-9]+}} {{.*}}, %[[E]]
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @late_broadcast(%x: tensor<128x512xf32>, %b: tensor<512xf32>) -> tensor<128x512xf32> {
  %0 = trn.exp %x : tensor<128x512xf32>
  %1 = trn.broadcast %b : tensor<512xf32> -> tensor<128x512xf32>
  %2 = trn.add %0, %1 : tensor<128x512xf32>
  return %2 : tensor<128x512xf32>
}

// -----

// A widening cast of a group value (bf16 -> f32) is exact, so its reader
// reads the bf16 tile: no copy.
// CHECK-LABEL: func.func @widening_cast_is_free
// CHECK: nisa.tensor_scalar %[[H:[0-9]+]] {{.*}} : <sbuf, 128, 512, bf16>, <sbuf, 128, 512, bf16>
// CHECK-NOT: nisa.tensor_copy
// CHECK: nisa.activation exp %{{[0-9]+}} {{.*}}, %[[H]]
func.func @widening_cast_is_free(%a: tensor<128x512xbf16>) -> (tensor<128x512xbf16>, tensor<128x512xf32>) {
  %0 = trn.mul_scalar %a, 2.0 : tensor<128x512xbf16>
  %1 = trn.convert %0 : tensor<128x512xbf16> -> tensor<128x512xf32>
  %2 = trn.exp %1 : tensor<128x512xf32>
  return %0, %2 : tensor<128x512xbf16>, tensor<128x512xf32>
}

// -----

// An optimizer-style update whose ops are spread over the function (a
// foreach step lists each op for every parameter in turn) is one group:
// the ops connected to the first one join wherever they are, the per-step
// scalar computed later in program order is lowered first (one tiny group,
// read back broadcast), grad is loaded once although it is read as bf16
// and cast to f32, and the bf16 fill read through a cast is an immediate
// (rounded to bf16: 0.1 -> 0.100097656), never filled. The unrelated op of
// the same shape (%1) is a group of its own after it.
// CHECK-LABEL: func.func @spread_update
// CHECK-NOT: nisa.memset
// CHECK: nisa.activation sqrt
// CHECK: nisa.dma_copy %arg6 {{.*}} : memref<1xf32>
// CHECK: nisa.dma_copy %[[SCALAR:[0-9]+]] {{.*}} : memref<1xbf16>
// CHECK: nisa.dma_copy %{{[0-9]+}} {{.*}}, %arg0
// CHECK-NOT: %arg2
// CHECK: nisa.dma_copy %[[G:[0-9]+]] {{.*}}, %arg1 {{.*}} : !nisa.tile<sbuf, 128, 512, bf16>, memref<65536xbf16>
// CHECK-NOT: %arg1
// CHECK: nisa.dma_copy %{{[0-9]+}} {{.*}}, %[[SCALAR]] <0, [0, 1], [128, 1]>
// CHECK: nisa.tensor_scalar %{{[0-9]+}} {{.*}}, %[[G]] {{.*}} multiply 0.100097656
// CHECK: nisa.tensor_tensor subtract %{{[0-9]+}} {{.*}}, %[[G]]
// CHECK: nisa.tensor_scalar {{.*}} divide 0.000000e+00 per_partition
// CHECK: nisa.tensor_tensor add
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %arg4
// CHECK-NEXT: nisa.alloc
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} {{.*}}, %arg2
// CHECK: nisa.dma_copy %arg5
// CHECK-NOT: nisa.dma_copy
// CHECK: return
func.func @spread_update(%p: tensor<128x512xbf16>, %g: tensor<128x512xbf16>, %q: tensor<128x512xbf16>, %step: tensor<f32>) -> (tensor<128x512xbf16>, tensor<128x512xbf16>, tensor<f32>) {
  %0 = trn.mul_scalar %p, 0.5 : tensor<128x512xbf16>
  %1 = trn.mul_scalar %q, 0.25 : tensor<128x512xbf16>
  %w = trn.full 0.1 : tensor<128x512xbf16>
  %wf = trn.convert %w : tensor<128x512xbf16> -> tensor<128x512xf32>
  %gf = trn.convert %g : tensor<128x512xbf16> -> tensor<128x512xf32>
  %2 = trn.mul %wf, %gf : tensor<128x512xf32>
  %3 = trn.sub %0, %g : tensor<128x512xbf16>
  %s = trn.add_scalar %step, 1.0 : tensor<f32>
  %c = trn.sqrt %s : tensor<f32>
  %cb = trn.convert %c : tensor<f32> -> tensor<bf16>
  %b = trn.broadcast %cb : tensor<bf16> -> tensor<128x512xbf16>
  %4 = trn.div %3, %b : tensor<128x512xbf16>
  %f4 = trn.convert %4 : tensor<128x512xbf16> -> tensor<128x512xf32>
  %5 = trn.add %f4, %2 : tensor<128x512xf32>
  %6 = trn.convert %5 : tensor<128x512xf32> -> tensor<128x512xbf16>
  return %6, %1, %s : tensor<128x512xbf16>, tensor<128x512xbf16>, tensor<f32>
}

// -----

// An op already lowered ahead of its place, as a member of an earlier
// group, is not computed again by a later group that could read it: each
// output is stored once.
// CHECK-LABEL: func.func @no_recompute
// CHECK-COUNT-1: nisa.activation tanh
// CHECK-NOT: nisa.activation tanh
// CHECK-COUNT-1: nisa.dma_copy %arg2
// CHECK-NOT: nisa.dma_copy %arg2
// CHECK: return
func.func @no_recompute(%x: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>) {
  %0 = trn.exp %x : tensor<128x128xf32>
  %1 = trn.softmax %x dim = 1 : tensor<128x128xf32>
  %2 = trn.sigmoid %1 : tensor<128x128xf32>
  %3 = trn.tanh %x : tensor<128x128xf32>
  %4 = trn.add %2, %3 : tensor<128x128xf32>
  return %0, %3, %4 : tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// A group no bigger than the producers lowered ahead for it (here 35
// elements) does not ask for them: the add reading threshold_backward's
// result waits for it instead of lowering it (and its operand's group,
// which would reach back to the add) from inside this group's formation.
// CHECK-LABEL: func.func @small_group
// CHECK: nisa.tensor_tensor multiply
// CHECK: nisa.copy_predicated
// CHECK: nisa.tensor_tensor add
// CHECK: return
func.func @small_group(%a: tensor<7x5xf32>, %b: tensor<7x5xf32>, %c: tensor<7x5xf32>, %d: tensor<7x5xf32>) -> tensor<7x5xf32> {
  %0 = trn.mul %d, %b : tensor<7x5xf32>
  %1 = trn.mul %d, %a : tensor<7x5xf32>
  %2 = trn.add %d, %0 : tensor<7x5xf32>
  %3 = trn.threshold_backward %1, %c, 0.000000e+00 : tensor<7x5xf32>
  %4 = trn.add %2, %3 : tensor<7x5xf32>
  return %4 : tensor<7x5xf32>
}

// -----

// A per-row value computed after the group's first op and read broadcast
// along the rows (a cross-entropy gradient's exp(logp) * sum): its producer
// has 1/1024 of the group's elements, so it is lowered first and the group
// stays one loop (only the per-row value goes through HBM); otherwise exp's
// result would go through HBM too.
// CHECK-LABEL: func.func @per_row_ahead
// CHECK: nisa.dram_alloc : memref<256xf32>
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.tensor_scalar {{.*}} multiply 2.000000e+00
// The per-row value is read as tensor_scalar's per-partition operand.
// CHECK: nisa.activation exp %[[E:[0-9]+]]
// CHECK-NEXT: nisa.alloc
// CHECK-NEXT: nisa.tensor_scalar %{{[0-9]+}} {{.*}}, %[[E]] {{.*}} multiply 0.000000e+00 per_partition
// CHECK: return
func.func @per_row_ahead(%x: tensor<256x1024xf32>, %r: tensor<256xf32>) -> tensor<256x1024xf32> {
  %0 = trn.exp %x : tensor<256x1024xf32>
  %1 = trn.mul_scalar %r, 2.000000e+00 : tensor<256xf32>
  %2 = trn.reshape %1 : tensor<256xf32> -> tensor<256x1xf32>
  %3 = trn.broadcast %2 : tensor<256x1xf32> -> tensor<256x1024xf32>
  %4 = trn.mul %0, %3 : tensor<256x1024xf32>
  return %4 : tensor<256x1024xf32>
}
