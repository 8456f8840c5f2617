// RUN: trnc-opt %s -split-input-file -trnc-schedule-semaphores | FileCheck %s

!t = !nisa.tile<sbuf, 128, 512, f32>

// Read after write across engines: the vector op waits for the DMA (queue
// 0, semaphore 5) to reach 1; the vector consumer of a vector result needs
// no wait; the store waits for vector position 1 (semaphore 1 >= 2). It
// also reads %t, which the first DMA wrote, so it goes on that DMA's queue
// and needs no wait for it. Compute engines signal their engine id.
// CHECK-LABEL: func.func @raw
func.func @raw(%in: memref<65536xf32> {nisa.input = 0 : i64},
               %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %t = nisa.alloc {address = 0 : i64} : !t
  %u = nisa.alloc {address = 2048 : i64} : !t
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 0 : i64, signal = 5 : i64} :
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  // CHECK: nisa.tensor_scalar
  // CHECK-SAME: {signal = 1 : i64, waits = array<i64: 5, 1>}
  nisa.tensor_scalar %u <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> multiply 2.0, add 1.0 on vector : !t, !t
  // Same engine: no wait, although it reads %u and overwrites %t.
  // CHECK: nisa.tensor_copy
  // CHECK-SAME: {signal = 1 : i64} :
  nisa.tensor_copy %t <0, [512, 1], [128, 512]>, %u <0, [512, 1], [128, 512]> on vector : !t, !t
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 0 : i64, signal = 5 : i64, waits = array<i64: 1, 2>}
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// Write after read: reloading %t must wait until the scalar engine has read
// it; loading %v (other bytes) does not wait and takes the next queue. The
// reload overwrites the first load's bytes: same queue, ordered, no wait.
// CHECK-LABEL: func.func @war
func.func @war(%in: memref<65536xf32> {nisa.input = 0 : i64}) {
  %t = nisa.alloc {address = 0 : i64} : !t
  %u = nisa.alloc {address = 2048 : i64} : !t
  %v = nisa.alloc {address = 4096 : i64} : !t
  // CHECK: nisa.dma_copy
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  // CHECK: nisa.activation
  // CHECK-SAME: waits = array<i64: 5, 1>
  nisa.activation exp %u <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !t, !t
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 1 : i64, signal = 6 : i64} :
  nisa.dma_copy %v <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 0 : i64, signal = 5 : i64, waits = array<i64: 2, 1>}
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

// -----

!s = !nisa.tile<sbuf, 128, 8, f32>

// DMA to DMA across queues. Read after write: the store reads both halves,
// loaded on queues 0 and 1; it joins queue 1 (the latest) and waits for
// queue 0 (semaphore 5). Write after read: two stores of a vector result
// (the second needs no wait: the first one's wait held back its issue) go
// on queues 2 and 3; the reload joins queue 3 and waits for queue 2.
// CHECK-LABEL: func.func @dma_queues
func.func @dma_queues(%in: memref<1024xf32> {nisa.input = 0 : i64},
                      %out: memref<1024xf32> {nisa.output = 0 : i64},
                      %res: memref<1024xf32> {nisa.output = 1 : i64}) {
  %t = nisa.alloc {address = 0 : i64} : !s
  %u = nisa.alloc {address = 64 : i64} : !s
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 0 : i64, signal = 5 : i64} :
  nisa.dma_copy %t <0, [8, 1], [64, 8]>, %in <0, [8, 1], [64, 8]> : !s, memref<1024xf32>
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 1 : i64, signal = 6 : i64} :
  nisa.dma_copy %t <512, [8, 1], [64, 8]>, %in <512, [8, 1], [64, 8]> : !s, memref<1024xf32>
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 1 : i64, signal = 6 : i64, waits = array<i64: 5, 1>}
  nisa.dma_copy %out <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> : memref<1024xf32>, !s
  // CHECK: nisa.memset
  // CHECK-SAME: {signal = 1 : i64} :
  nisa.memset %u <0, [8, 1], [128, 8]>, 1.0 on vector : !s
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 2 : i64, signal = 7 : i64, waits = array<i64: 1, 1>}
  nisa.dma_copy %res <0, [8, 1], [64, 8]>, %u <0, [8, 1], [64, 8]> : memref<1024xf32>, !s
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 3 : i64, signal = 8 : i64} :
  nisa.dma_copy %res <512, [8, 1], [64, 8]>, %u <512, [8, 1], [64, 8]> : memref<1024xf32>, !s
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 3 : i64, signal = 8 : i64, waits = array<i64: 7, 1>}
  nisa.dma_copy %u <0, [8, 1], [128, 8]>, %in <0, [8, 1], [128, 8]> : !s, memref<1024xf32>
  return
}

// -----

!s = !nisa.tile<sbuf, 128, 8, f32>

// A consumer of eight DMAs on eight queues needs eight waits: four fit the
// instruction, the rest go on a wait-only nop just before it, same engine.
// CHECK-LABEL: func.func @many_waits
func.func @many_waits(%in: memref<1024xf32> {nisa.input = 0 : i64}) {
  %t = nisa.alloc {address = 0 : i64} : !s
  %u = nisa.alloc {address = 64 : i64} : !s
  nisa.dma_copy %t <0, [8, 1], [16, 8]>, %in <0, [8, 1], [16, 8]> : !s, memref<1024xf32>
  nisa.dma_copy %t <128, [8, 1], [16, 8]>, %in <128, [8, 1], [16, 8]> : !s, memref<1024xf32>
  nisa.dma_copy %t <256, [8, 1], [16, 8]>, %in <256, [8, 1], [16, 8]> : !s, memref<1024xf32>
  nisa.dma_copy %t <384, [8, 1], [16, 8]>, %in <384, [8, 1], [16, 8]> : !s, memref<1024xf32>
  nisa.dma_copy %t <512, [8, 1], [16, 8]>, %in <512, [8, 1], [16, 8]> : !s, memref<1024xf32>
  nisa.dma_copy %t <640, [8, 1], [16, 8]>, %in <640, [8, 1], [16, 8]> : !s, memref<1024xf32>
  nisa.dma_copy %t <768, [8, 1], [16, 8]>, %in <768, [8, 1], [16, 8]> : !s, memref<1024xf32>
  // CHECK: nisa.dma_copy %{{.*}} <896
  // CHECK-SAME: {queue = 7 : i64, signal = 12 : i64} :
  nisa.dma_copy %t <896, [8, 1], [16, 8]>, %in <896, [8, 1], [16, 8]> : !s, memref<1024xf32>
  // CHECK-NEXT: nisa.nop on vector {waits = array<i64: 5, 1, 6, 1, 7, 1, 8, 1>}
  // CHECK-NEXT: nisa.tensor_copy
  // CHECK-SAME: {signal = 1 : i64, waits = array<i64: 9, 1, 10, 1, 11, 1, 12, 1>}
  nisa.tensor_copy %u <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> on vector : !s, !s
  return
}

// -----

// dma_gather/dma_scatter get a queue like dma_copy. The gather reads the
// index tile its queue's previous DMA loaded (queue 1, no wait). The first
// scatter reads the gathered tile (queue 1 again) and writes the whole
// table the base copy wrote on queue 0: it waits for that copy (semaphore
// 5 >= 1). The second scatter (WAW on %out) follows on the same queue,
// keeping last-writer-wins order without a wait.
// CHECK-LABEL: func.func @indirect
func.func @indirect(%base: memref<640xf32> {nisa.input = 0 : i64},
                   %idx: memref<128xi32> {nisa.input = 1 : i64},
                   %out: memref<640xf32> {nisa.output = 0 : i64}) {
  %i = nisa.alloc {address = 0 : i64} : !nisa.tile<sbuf, 128, 1, i32>
  %t = nisa.alloc {address = 64 : i64} : !nisa.tile<sbuf, 128, 64, f32>
  // CHECK: nisa.dma_copy {{.*}} {queue = 0 : i64, signal = 5 : i64}
  nisa.dma_copy %out <0, [64, 1], [10, 64]>, %base <0, [64, 1], [10, 64]> : memref<640xf32>, memref<640xf32>
  // CHECK: nisa.dma_copy {{.*}}queue = 1 : i64, signal = 6 : i64}
  nisa.dma_copy %i <0, [1, 1], [128, 1]>, %idx <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 1, i32>, memref<128xi32>
  // CHECK: nisa.dma_gather {{.*}}queue = 1 : i64, signal = 6 : i64}
  nisa.dma_gather %t <0, [64, 1], [128, 64]>, %base <0, [64, 1], [10, 64]>, %i <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 64, f32>, memref<640xf32>, !nisa.tile<sbuf, 128, 1, i32>
  // CHECK: nisa.dma_scatter {{.*}}accumulate {queue = 1 : i64, signal = 6 : i64, waits = array<i64: 5, 1>}
  nisa.dma_scatter %out <0, [64, 1], [10, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> accumulate : memref<640xf32>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  // CHECK: nisa.dma_scatter {{.*}}{queue = 1 : i64, signal = 6 : i64}
  nisa.dma_scatter %out <0, [64, 1], [10, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> : memref<640xf32>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  return
}

// -----

// Idempotent scatters (equal bytes to every row they share) on queues 1
// and 2: the first waits for its operands' loads (queue 0: semaphore
// 5 >= 2), which the DMA stream's issue order passes on to the second; the
// second does not wait for the first (plain scatters would: 6 >= 1). The
// copy of the table after them waits for both (semaphores 6 and 7).
// CHECK-LABEL: func.func @idempotent_scatters
func.func @idempotent_scatters(%idx: memref<128xi32> {nisa.input = 0 : i64},
                               %rows: memref<8192xf32> {nisa.input = 1 : i64},
                               %out: memref<640xf32> {nisa.output = 0 : i64},
                               %copy: memref<640xf32> {nisa.output = 1 : i64}) {
  %i = nisa.alloc {address = 0 : i64} : !nisa.tile<sbuf, 128, 1, i32>
  %t = nisa.alloc {address = 64 : i64} : !nisa.tile<sbuf, 128, 64, f32>
  nisa.dma_copy %i <0, [1, 1], [128, 1]>, %idx <0, [1, 1], [128, 1]> {queue = 0 : i64} : !nisa.tile<sbuf, 128, 1, i32>, memref<128xi32>
  nisa.dma_copy %t <0, [64, 1], [128, 64]>, %rows <0, [64, 1], [128, 64]> {queue = 0 : i64} : !nisa.tile<sbuf, 128, 64, f32>, memref<8192xf32>
  // CHECK: nisa.dma_scatter {{.*}} idempotent {queue = 1 : i64, signal = 6 : i64, waits = array<i64: 5, 2>}
  nisa.dma_scatter %out <0, [64, 1], [10, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> idempotent {queue = 1 : i64} : memref<640xf32>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  // CHECK: nisa.dma_scatter {{.*}} idempotent {queue = 2 : i64, signal = 7 : i64} :
  nisa.dma_scatter %out <0, [64, 1], [10, 64]>, %t <0, [64, 1], [128, 64]>, %i <0, [1, 1], [128, 1]> idempotent {queue = 2 : i64} : memref<640xf32>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
  // CHECK: nisa.dma_copy {{.*}} {queue = 3 : i64, signal = 8 : i64, waits = array<i64: 6, 1, 7, 1>}
  nisa.dma_copy %copy <0, [64, 1], [10, 64]>, %out <0, [64, 1], [10, 64]> {queue = 3 : i64} : memref<640xf32>, memref<640xf32>
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// A queue the list scheduler chose stays (its timing assumed it); a DMA
// without one gets the pass's choice.
// CHECK-LABEL: func.func @kept_queue
func.func @kept_queue(%in: memref<65536xf32> {nisa.input = 0 : i64}) {
  %t = nisa.alloc {address = 0 : i64} : !t
  %u = nisa.alloc {address = 2048 : i64} : !t
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 3 : i64, signal = 8 : i64}
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> {queue = 3 : i64} : !t, memref<65536xf32>
  // CHECK: nisa.dma_copy
  // CHECK-SAME: {queue = 0 : i64, signal = 5 : i64}
  nisa.dma_copy %u <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// A cross-core barrier (LNC=2): the peer signal waits for the last transfer
// of every queue used so far (queues 0 and 1: semaphores 5 and 6) and
// signals its barrier semaphore; the wait carries only the barrier count;
// neither is a queue's instruction, so the next load is queue 2's first
// (semaphore 7 >= 1 for whoever waits on it) and needs no wait.
// CHECK-LABEL: func.func @barrier
// CHECK: nisa.dma_copy
// CHECK-SAME: {queue = 0 : i64, signal = 5 : i64}
// CHECK: nisa.dma_copy
// CHECK-SAME: {queue = 1 : i64, signal = 6 : i64}
// CHECK: nisa.peer_signal {semaphore = 21 : i64, signal = 21 : i64, waits = array<i64: 5, 1, 6, 1>}
// CHECK-NEXT: nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64, waits = array<i64: 21, 1>}
// CHECK-NEXT: nisa.dma_copy
// CHECK-SAME: {queue = 2 : i64, signal = 7 : i64} :
func.func @barrier(%in: memref<65536xf32> {nisa.input = 0 : i64},
                   %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %t = nisa.alloc {address = 0 : i64} : !t
  %u = nisa.alloc {address = 2048 : i64} : !t
  %v = nisa.alloc {address = 4096 : i64} : !t
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.dma_copy %u <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.peer_signal {semaphore = 21 : i64}
  nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
  nisa.dma_copy %v <0, [512, 1], [128, 512]>, %out <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  return
}
