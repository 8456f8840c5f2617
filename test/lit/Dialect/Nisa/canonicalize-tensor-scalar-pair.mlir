// Two one-operator tensor_scalars, the second reading the first's fp32 tile
// whole, are one two-operator instruction (dialects/Nisa/NisaCanonicalize.cpp):
// each operand an immediate or a per-partition [P, 1] tile.
// RUN: trnc-opt %s -split-input-file --canonicalize | FileCheck %s

// A norm's (x - mean) * rstd: the second writes in place, so the tile holds
// its result for the copy after.
// CHECK-LABEL: func.func @norm_pair
// CHECK: nisa.tensor_scalar %[[T:[0-9a-z]+]] <0, [8, 1], [128, 8]>, %arg0 <0, [8, 1], [128, 8]> subtract 0.000000e+00 per_partition %arg1 <0, [1, 1], [128, 1]>, multiply 0.000000e+00 per_partition %arg2 <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 1, f32> on vector {trnc.engine_free}
// CHECK-NOT: nisa.tensor_scalar
// CHECK: nisa.tensor_copy %{{.*}}, %[[T]]
func.func @norm_pair(%x: !nisa.tile<sbuf, 128, 8, f32>, %mean: !nisa.tile<sbuf, 128, 1, f32>, %rstd: !nisa.tile<sbuf, 128, 1, f32>, %out: !nisa.tile<sbuf, 128, 8, bf16>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> subtract 0.0 per_partition %mean <0, [1, 1], [128, 1]>, bypass 0.0 on vector {trnc.engine_free} : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> multiply 0.0 per_partition %rstd <0, [1, 1], [128, 1]>, bypass 0.0 on vector {trnc.engine_free} : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_copy %out <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> on vector : !nisa.tile<sbuf, 128, 8, bf16>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

// An immediate op0 and a per-partition op1 (N * g - sum(g)); the first's
// tile is read by nothing else and goes.
// CHECK-LABEL: func.func @immediate_then_per_partition
// CHECK-NOT: nisa.alloc
// CHECK: nisa.tensor_scalar %arg3 <0, [8, 1], [128, 8]>, %arg0 <0, [8, 1], [128, 8]> multiply 1.024000e+03, subtract 0.000000e+00 per_partition %arg1 <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 1, f32> on gpsimd :
// CHECK-NEXT: return
func.func @immediate_then_per_partition(%g: !nisa.tile<sbuf, 128, 8, f32>, %sum: !nisa.tile<sbuf, 128, 1, f32>, %unused: !nisa.tile<sbuf, 128, 1, f32>, %out: !nisa.tile<sbuf, 128, 8, f32>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %g <0, [8, 1], [128, 8]> multiply 1024.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %out <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> subtract 0.0 per_partition %sum <0, [1, 1], [128, 1]>, bypass 0.0 on gpsimd : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  return
}

// -----

// Both in place, as an fp32 row is normalised where it was loaded: with the
// first gone, the tile still holds x when the pair reads it.
// CHECK-LABEL: func.func @both_in_place
// CHECK: nisa.tensor_scalar %[[T:[0-9a-z]+]] <0, [8, 1], [128, 8]>, %[[T]] <0, [8, 1], [128, 8]> subtract 0.000000e+00 per_partition %arg0 <0, [1, 1], [128, 1]>, multiply 0.000000e+00 per_partition %arg1
// CHECK-NEXT: nisa.tensor_copy
func.func @both_in_place(%mean: !nisa.tile<sbuf, 128, 1, f32>, %rstd: !nisa.tile<sbuf, 128, 1, f32>, %in: memref<1024xf32>, %out: !nisa.tile<sbuf, 128, 8, bf16>) {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
  nisa.dma_copy %t <0, [8, 1], [128, 8]>, %in <0, [8, 1], [128, 8]> : !nisa.tile<sbuf, 128, 8, f32>, memref<1024xf32>
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> subtract 0.0 per_partition %mean <0, [1, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> multiply 0.0 per_partition %rstd <0, [1, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_copy %out <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> on vector : !nisa.tile<sbuf, 128, 8, bf16>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

// Not folded: the first's result rounded to bf16 (the pair would skip the
// rounding); read again after a second that writes elsewhere; a source of
// the first rewritten in between; the first already has two operators; the
// first in place on a tile the caller owns, the second writing elsewhere
// (the tile would keep x, not x - 1); the second's per-partition operand a
// column of the first's tile.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-12: nisa.tensor_scalar
// CHECK: return
func.func @kept(%x: !nisa.tile<sbuf, 128, 8, f32>, %m: !nisa.tile<sbuf, 128, 1, f32>, %o: !nisa.tile<sbuf, 128, 8, f32>) {
  %h = nisa.alloc : !nisa.tile<sbuf, 128, 8, bf16>
  nisa.tensor_scalar %h <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> subtract 0.0 per_partition %m <0, [1, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, bf16>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_scalar %o <0, [8, 1], [128, 8]>, %h <0, [8, 1], [128, 8]> multiply 2.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, bf16>

  %a = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %a <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> subtract 0.0 per_partition %m <0, [1, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_scalar %o <0, [8, 1], [128, 8]>, %a <0, [8, 1], [128, 8]> multiply 2.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_copy %o <0, [8, 1], [128, 8]>, %a <0, [8, 1], [128, 8]> on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>

  %b = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %b <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> subtract 0.0 per_partition %m <0, [1, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  nisa.memset %m <0, [1, 1], [128, 1]>, 1.0 on vector : !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_scalar %b <0, [8, 1], [128, 8]>, %b <0, [8, 1], [128, 8]> multiply 2.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>

  %c = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %c <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> subtract 1.0, add 2.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %c <0, [8, 1], [128, 8]>, %c <0, [8, 1], [128, 8]> multiply 2.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>

  nisa.tensor_scalar %x <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> subtract 1.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %o <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> multiply 2.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>

  %d = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %d <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> subtract 1.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  nisa.tensor_scalar %d <0, [8, 1], [128, 8]>, %d <0, [8, 1], [128, 8]> multiply 0.0 per_partition %d <7, [8, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

// Inside a tile loop's body, as the tile phase emits it.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK-NEXT: nisa.tensor_scalar {{.*}} subtract 0.000000e+00 per_partition %arg1 {{.*}}, multiply 0.000000e+00 per_partition %arg2
// CHECK-NEXT: }
func.func @in_loop(%x: !nisa.tile<sbuf, 128, 8, f32>, %mean: !nisa.tile<sbuf, 128, 1, f32>, %rstd: !nisa.tile<sbuf, 128, 1, f32>, %out: !nisa.tile<sbuf, 128, 8, f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
    nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %x <0, [8, 1], [128, 8]> subtract 0.0 per_partition %mean <0, [1, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
    nisa.tensor_scalar %out <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> multiply 0.0 per_partition %rstd <0, [1, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  }
  return
}
