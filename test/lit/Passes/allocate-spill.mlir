// trnc-allocate-memory spills: %a (80000 B per partition) is idle while %b
// and %c work and the three do not fit trn1's 192 KiB partitions, so %a is
// stored to HBM scratch after its memset and loaded into a fresh tile just
// before the add reads it; the add reads the fresh tile. When every live
// tile is an operand of the instruction, nothing can be spilled (the error
// cases are in allocate.mlir and allocate-memory-map.mlir).
// RUN: trnc-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(trnc-allocate-memory{target=trn1}))' | FileCheck %s
// Without the store and the load, %a, %b and %c would be live at once.
// CHECK-LABEL: func.func @spill
// CHECK: %[[A:[0-9]+]] = nisa.alloc {address = 0 : i64}
// CHECK: %[[C:[0-9]+]] = nisa.alloc {address = 0 : i64}
// CHECK: nisa.memset %[[A]]
// CHECK-NEXT: %[[S:[0-9]+]] = nisa.dram_alloc : memref<2560000xf32>
// CHECK-NEXT: nisa.dma_copy %[[S]] <0, [20000, 1], [128, 20000]>, %[[A]] <0, [20000, 1], [128, 20000]>
// CHECK-NEXT: nisa.memset
// CHECK-NEXT: nisa.tensor_copy %[[C]]
// CHECK-NEXT: %[[R:[0-9]+]] = nisa.alloc {address = 80000 : i64}
// CHECK-NEXT: nisa.dma_copy %[[R]] <0, [20000, 1], [128, 20000]>, %[[S]] <0, [20000, 1], [128, 20000]>
// CHECK-NEXT: nisa.tensor_tensor add %[[C]] {{.*}}, %[[C]] {{.*}}, %[[R]] <0, [20000, 1], [128, 20000]>
func.func @spill(%out: memref<2560000xf32> {nisa.output = 0 : i64, nisa.shape = array<i64: 128, 20000>, nisa.strides = array<i64: 20000, 1>}) {
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 20000, f32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 20000, f32>
  %c = nisa.alloc : !nisa.tile<sbuf, 128, 20000, f32>
  nisa.memset %a <0, [20000, 1], [128, 20000]>, 1.0 on vector : !nisa.tile<sbuf, 128, 20000, f32>
  nisa.memset %b <0, [20000, 1], [128, 20000]>, 2.0 on vector : !nisa.tile<sbuf, 128, 20000, f32>
  nisa.tensor_copy %c <0, [20000, 1], [128, 20000]>, %b <0, [20000, 1], [128, 20000]> on vector
      : !nisa.tile<sbuf, 128, 20000, f32>, !nisa.tile<sbuf, 128, 20000, f32>
  nisa.tensor_tensor add %c <0, [20000, 1], [128, 20000]>, %c <0, [20000, 1], [128, 20000]>,
      %a <0, [20000, 1], [128, 20000]> on vector
      : !nisa.tile<sbuf, 128, 20000, f32>, !nisa.tile<sbuf, 128, 20000, f32>, !nisa.tile<sbuf, 128, 20000, f32>
  nisa.dma_copy %out <0, [20000, 1], [128, 20000]>, %c <0, [20000, 1], [128, 20000]> : memref<2560000xf32>, !nisa.tile<sbuf, 128, 20000, f32>
  return
}

// -----

// Two tiles are idle where %c needs room: %a is needed again last, so it is
// the one spilled (Belady); %b, needed sooner, stays.
// CHECK-LABEL: func.func @belady
// CHECK: %[[A:[0-9]+]] = nisa.alloc {address = 0 : i64} : <sbuf, 128, 20000, f32>
// CHECK: %[[B:[0-9]+]] = nisa.alloc {address = 80000 : i64} : <sbuf, 128, 10000, f32>
// CHECK: nisa.memset %[[A]]
// CHECK-NEXT: %[[S:[0-9]+]] = nisa.dram_alloc : memref<2560000xf32>
// CHECK-NEXT: nisa.dma_copy %[[S]] {{.*}}, %[[A]]
// CHECK-NEXT: nisa.memset %[[B]]
// CHECK-NOT: nisa.dma_copy {{.*}}, %[[B]]
// CHECK: nisa.tensor_copy %[[B]]
// CHECK: nisa.dma_copy %[[R:[0-9]+]] {{.*}}, %[[S]]
// CHECK-NEXT: nisa.tensor_copy %{{[0-9]+}} {{.*}}, %[[R]]
func.func @belady() {
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 20000, f32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 10000, f32>
  %c = nisa.alloc : !nisa.tile<sbuf, 128, 20000, f32>
  %d = nisa.alloc : !nisa.tile<sbuf, 128, 10000, f32>
  nisa.memset %a <0, [20000, 1], [128, 20000]>, 1.0 on vector : !nisa.tile<sbuf, 128, 20000, f32>
  nisa.memset %b <0, [10000, 1], [128, 10000]>, 2.0 on vector : !nisa.tile<sbuf, 128, 10000, f32>
  nisa.memset %c <0, [20000, 1], [128, 20000]>, 3.0 on vector : !nisa.tile<sbuf, 128, 20000, f32>
  nisa.tensor_copy %b <0, [10000, 1], [128, 10000]>, %c <0, [20000, 1], [128, 10000]> on vector
      : !nisa.tile<sbuf, 128, 10000, f32>, !nisa.tile<sbuf, 128, 20000, f32>
  nisa.tensor_copy %d <0, [10000, 1], [128, 10000]>, %a <0, [20000, 1], [128, 10000]> on vector
      : !nisa.tile<sbuf, 128, 10000, f32>, !nisa.tile<sbuf, 128, 20000, f32>
  return
}
