// RUN: trnc-opt %s -trnc-schedule-semaphores | FileCheck %s

!t = !nisa.tile<sbuf, 1, 32, f32>

// The collective stays on queue 15 (semaphore 20) and waits for the DMA
// that wrote its input; the load of its result waits for semaphore 20:
// that wait is wait_tensor (queue 0 is DMA 2's, known complete, so the
// load takes the next queue).
// CHECK-LABEL: func.func @wait_tensor
func.func @wait_tensor(%in: memref<32xf32> {nisa.input = 0 : i64},
                       %out: memref<32xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<32xf32>
  %r = nisa.dram_alloc : memref<32xf32>
  %t = nisa.alloc {address = 0 : i64} : !t
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 0 : i64, signal = 5 : i64}
  nisa.dma_copy %t <0, [32, 1], [1, 32]>, %in <0, [32, 1], [1, 32]> : !t, memref<32xf32>
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 0 : i64, signal = 5 : i64}
  nisa.dma_copy %s <0, [32, 1], [1, 32]>, %t <0, [32, 1], [1, 32]> : memref<32xf32>, !t
  // CHECK: nisa.collective
  // CHECK-SAME: {signal = 20 : i64, waits = array<i64: 5, 2>}
  nisa.collective %r <0, [32, 1], [1, 32]>, %s <0, [32, 1], [1, 32]> all_reduce sum group 2 id 0 span chip : memref<32xf32>, memref<32xf32>
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 1 : i64, signal = 6 : i64, waits = array<i64: 20, 1>}
  nisa.dma_copy %t <0, [32, 1], [1, 32]>, %r <0, [32, 1], [1, 32]> : !t, memref<32xf32>
  return
}

// In a program with a collective, round-robin DMAs skip queue 15: sixteen
// independent stores use queues 0..14 and wrap around to 0.
// CHECK-LABEL: func.func @reserved
// CHECK-NOT: queue = 15
// CHECK: nisa.collective
// CHECK-NOT: queue = 15
// CHECK: return
func.func @reserved(%in: memref<32xf32> {nisa.input = 0 : i64},
                    %out: memref<32xf32> {nisa.output = 0 : i64}) {
  %r = nisa.dram_alloc : memref<32xf32>
  %t = nisa.alloc {address = 0 : i64} : !t
  nisa.collective %r <0, [32, 1], [1, 32]>, %in <0, [32, 1], [1, 32]> all_reduce sum group 2 id 0 span chip : memref<32xf32>, memref<32xf32>
  nisa.dma_copy %out <0, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <2, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <4, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <6, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <8, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <10, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <12, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <14, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <16, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <18, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <20, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <22, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <24, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <26, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <28, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  nisa.dma_copy %out <30, [2, 1], [1, 2]>, %t <0, [2, 1], [1, 2]> : memref<32xf32>, !t
  return
}
