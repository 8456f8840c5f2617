// RUN: trnc-opt %s -split-input-file -trnc-schedule-semaphores | FileCheck %s

!t = !nisa.tile<sbuf, 128, 512, f32>

// Read after write across engines: the vector op waits for the DMA (engine
// 4) to reach 1; the vector consumer of a vector result needs no wait; the
// store waits for vector position 1 (semaphore 1 >= 2). Everything signals
// its own engine; DMA instructions take queues round-robin.
// CHECK-LABEL: func.func @raw
func.func @raw(%in: memref<65536xf32> {nisa.input = 0 : i64},
               %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %t = nisa.alloc {address = 0 : i64} : !t
  %u = nisa.alloc {address = 2048 : i64} : !t
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {signal = 4 : i64} :
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  // CHECK: nisa.tensor_scalar
  // CHECK-SAME: {signal = 1 : i64, waits = array<i64: 4, 1>}
  nisa.tensor_scalar %u <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> multiply 2.0, add 1.0 on vector : !t, !t
  // Same engine: no wait, although it reads %u and overwrites %t.
  // CHECK: nisa.tensor_copy
  // CHECK-SAME: {signal = 1 : i64} :
  nisa.tensor_copy %t <0, [512, 1], [128, 512]>, %u <0, [512, 1], [128, 512]> on vector : !t, !t
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 1 : i64, signal = 4 : i64, waits = array<i64: 1, 2>}
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// Write after read: reloading %t must wait until the scalar engine has read
// it; loading %v (other bytes) does not wait.
// CHECK-LABEL: func.func @war
func.func @war(%in: memref<65536xf32> {nisa.input = 0 : i64}) {
  %t = nisa.alloc {address = 0 : i64} : !t
  %u = nisa.alloc {address = 2048 : i64} : !t
  %v = nisa.alloc {address = 4096 : i64} : !t
  // CHECK: nisa.dma_copy
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  // CHECK: nisa.activation
  // CHECK-SAME: waits = array<i64: 4, 1>
  nisa.activation exp %u <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !t, !t
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 1 : i64, signal = 4 : i64} :
  nisa.dma_copy %v <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 2 : i64, signal = 4 : i64, waits = array<i64: 2, 1>}
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// At most one wait per engine, the latest one; waits on two engines are
// listed by engine number. Disjoint partitions of one tile do not conflict.
// CHECK-LABEL: func.func @latest
func.func @latest(%out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %a = nisa.alloc {address = 0 : i64} : !t
  %b = nisa.alloc {address = 2048 : i64} : !t
  %c = nisa.alloc {address = 4096 : i64} : !t
  // CHECK: nisa.memset
  nisa.memset %a <0, [512, 1], [128, 512]>, 1.0 on vector : !t
  // CHECK: nisa.memset
  nisa.memset %b <0, [512, 1], [64, 512]>, 2.0 on vector : !t
  // CHECK: nisa.memset
  // CHECK-SAME: {signal = 3 : i64} :
  nisa.memset %b <32768, [512, 1], [64, 512]>, 3.0 on gpsimd : !t
  // CHECK: nisa.tensor_tensor
  // CHECK-SAME: {signal = 3 : i64, waits = array<i64: 1, 2>}
  nisa.tensor_tensor add %c <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]>,
      %b <0, [512, 1], [128, 512]> on gpsimd : !t, !t, !t
  // CHECK: nisa.activation
  // The WAW on %a with vector is implied: gpsimd 1 waited for vector 1.
  // CHECK-SAME: {signal = 2 : i64, waits = array<i64: 3, 2>}
  nisa.activation copy %a <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : !t, !t
  return
}
