// RUN: trnc-opt %s -split-input-file -trnc-pack-scratch="reuse-distance=0" | FileCheck %s
// RUN: trnc-opt %s -split-input-file -trnc-pack-scratch="reuse-distance=0" -trnc-schedule-semaphores | FileCheck %s --check-prefix=SEM
// RUN: trnc-opt %s -split-input-file -trnc-pack-scratch | FileCheck %s --check-prefix=NEAR

!t = !nisa.tile<sbuf, 128, 512, f32>

// %a is dead (last read at instruction 1) before %b is first written
// (instruction 2): they share offset 0. %c is live while %b is: it goes
// after %b's 256 KiB. %d (100 bytes, live with %c) starts at the next
// 64-byte boundary after %c; %e, never touched, takes offset 0.
// The semaphore pass sees the shared bytes: %b's store (queue 1), which
// touches nothing else of %a's load, waits for that load (queue 0,
// semaphore 5 >= 2) instead of overwriting %a while it is read.
// CHECK-LABEL: func.func @main
// CHECK: nisa.dram_alloc {offset = 0 : i64} : memref<65536xf32>
// CHECK: nisa.dram_alloc {offset = 0 : i64} : memref<65536xf32>
// CHECK: nisa.dram_alloc {offset = 262144 : i64} : memref<65536xf32>
// CHECK: nisa.dram_alloc {offset = 524288 : i64} : memref<25xf32>
// CHECK: nisa.dram_alloc {offset = 0 : i64} : memref<16xf32>
// By default bytes are reused only 64 instructions after their last use
// (the DMA stream issues in order, so an early wait stalls every later
// transfer): here nothing is that far apart, and nothing shares.
// NEAR-LABEL: func.func @main
// NEAR: nisa.dram_alloc {offset = 0 : i64} : memref<65536xf32>
// NEAR: nisa.dram_alloc {offset = 262144 : i64} : memref<65536xf32>
// NEAR: nisa.dram_alloc {offset = 524288 : i64} : memref<65536xf32>
// NEAR: nisa.dram_alloc {offset = 786432 : i64} : memref<25xf32>
// SEM-LABEL: func.func @main
// SEM: nisa.dma_copy
// SEM-SAME: {queue = 0 : i64, signal = 5 : i64} :
// SEM: nisa.dma_copy
// SEM-SAME: {queue = 0 : i64, signal = 5 : i64} :
// SEM: nisa.dma_copy
// SEM-SAME: {queue = 1 : i64, signal = 6 : i64, waits = array<i64: 5, 2>} :
func.func @main(%in: memref<65536xf32> {nisa.input = 0 : i64},
                %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %a = nisa.dram_alloc : memref<65536xf32>
  %b = nisa.dram_alloc : memref<65536xf32>
  %c = nisa.dram_alloc : memref<65536xf32>
  %d = nisa.dram_alloc : memref<25xf32>
  %e = nisa.dram_alloc : memref<16xf32>
  %t = nisa.alloc {address = 0 : i64} : !t
  %u = nisa.alloc {address = 2048 : i64} : !t
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> {queue = 0 : i64} : memref<65536xf32>, !t
  nisa.dma_copy %u <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> {queue = 0 : i64} : !t, memref<65536xf32>
  nisa.dma_copy %b <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> {queue = 1 : i64} : memref<65536xf32>, !t
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> {queue = 2 : i64} : memref<65536xf32>, !t
  nisa.dma_copy %d <0, [1, 1], [25, 1]>, %t <0, [512, 1], [25, 1]> {queue = 3 : i64} : memref<25xf32>, !t
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> {queue = 1 : i64} : !t, memref<65536xf32>
  nisa.dma_copy %t <0, [512, 1], [25, 1]>, %d <0, [1, 1], [25, 1]> {queue = 3 : i64} : !t, memref<25xf32>
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> {queue = 2 : i64} : memref<65536xf32>, memref<65536xf32>
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// LNC=2: program positions of the two cores are not comparable, only
// barriers order them. %x (core 0, positions 1..2) and %y (core 1,
// positions 3..4) do not overlap as numbers, but the cores run at once:
// they must not share. %z is first used after the barrier, which every use
// of %x precedes: it shares %x's bytes (not %y's, read after the barrier
// too). Core 1's copies take core 0's offsets by their trnc.scratch tag.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK: nisa.dram_alloc {offset = 0 : i64, trnc.scratch = 0 : i64}
// CHECK: nisa.dram_alloc {offset = 262144 : i64, trnc.scratch = 1 : i64}
// CHECK: nisa.dram_alloc {offset = 0 : i64, trnc.scratch = 2 : i64}
// CHECK: func.func @main_core1(
// CHECK: nisa.dram_alloc {offset = 0 : i64, trnc.scratch = 0 : i64}
// CHECK: nisa.dram_alloc {offset = 262144 : i64, trnc.scratch = 1 : i64}
// CHECK: nisa.dram_alloc {offset = 0 : i64, trnc.scratch = 2 : i64}
module attributes {trnc.lnc = 2 : i64} {
  func.func @main(%in: memref<65536xf32> {nisa.input = 0 : i64},
                  %out: memref<65536xf32> {nisa.output = 0 : i64}) attributes {trnc.core = 0 : i64} {
    %x = nisa.dram_alloc {trnc.scratch = 0 : i64} : memref<65536xf32>
    %y = nisa.dram_alloc {trnc.scratch = 1 : i64} : memref<65536xf32>
    %z = nisa.dram_alloc {trnc.scratch = 2 : i64} : memref<65536xf32>
    %t = nisa.alloc {address = 0 : i64} : !t
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
    nisa.dma_copy %x <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %x <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
    nisa.peer_signal {semaphore = 21 : i64}
    nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
    nisa.dma_copy %z <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
    nisa.dma_copy %out <0, [512, 1], [128, 512]>, %z <0, [512, 1], [128, 512]> : memref<65536xf32>, memref<65536xf32>
    return
  }
  func.func @main_core1(%in: memref<65536xf32> {nisa.input = 0 : i64},
                        %out: memref<65536xf32> {nisa.output = 0 : i64}) attributes {trnc.core = 1 : i64} {
    %x = nisa.dram_alloc {trnc.scratch = 0 : i64} : memref<65536xf32>
    %y = nisa.dram_alloc {trnc.scratch = 1 : i64} : memref<65536xf32>
    %z = nisa.dram_alloc {trnc.scratch = 2 : i64} : memref<65536xf32>
    %t = nisa.alloc {address = 0 : i64} : !t
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
    nisa.dma_copy %y <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
    nisa.peer_signal {semaphore = 21 : i64}
    nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %y <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
    return
  }
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// A buffer a collective touches keeps its bytes: the collective runs long
// on its own queue, and a buffer reusing them would wait for it. %g (all
// reduced) is dead before %h is written, yet %h goes after it; %h, dead
// before %l, shares with it as usual.
// CHECK-LABEL: func.func @collective
// CHECK: nisa.dram_alloc {offset = 0 : i64} : memref<65536xf32>
// CHECK: nisa.dram_alloc {offset = 262144 : i64} : memref<65536xf32>
// CHECK: nisa.dram_alloc {offset = 262144 : i64} : memref<65536xf32>
func.func @collective(%in: memref<65536xf32> {nisa.input = 0 : i64},
                      %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %g = nisa.dram_alloc : memref<65536xf32>
  %h = nisa.dram_alloc : memref<65536xf32>
  %l = nisa.dram_alloc : memref<65536xf32>
  %t = nisa.alloc {address = 0 : i64} : !t
  nisa.collective %g <0, [65536, 1], [1, 65536]>, %in <0, [65536, 1], [1, 65536]> all_reduce sum group 2 id 0 span instance : memref<65536xf32>, memref<65536xf32>
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %g <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.dma_copy %h <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %h <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.dma_copy %l <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %l <0, [512, 1], [128, 512]> : memref<65536xf32>, memref<65536xf32>
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// With the list scheduler's timeline (trnc.estimated_live, ns; removed
// here): %b's first access is estimated to start (3000) before %a's last
// ends (3500), so %b would wait for a transfer in flight and does not take
// %a's bytes; %c starts after (4000) and does, however close in program
// order.
// CHECK-LABEL: func.func @timeline
// CHECK: nisa.dram_alloc {offset = 0 : i64} : memref<65536xf32>
// CHECK: nisa.dram_alloc {offset = 262144 : i64} : memref<65536xf32>
// CHECK: nisa.dram_alloc {offset = 0 : i64} : memref<65536xf32>
// CHECK-NOT: estimated_live
func.func @timeline(%in: memref<65536xf32> {nisa.input = 0 : i64},
                    %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %a = nisa.dram_alloc {trnc.estimated_live = array<i64: 1000, 3500>} : memref<65536xf32>
  %b = nisa.dram_alloc {trnc.estimated_live = array<i64: 3000, 5000>} : memref<65536xf32>
  %c = nisa.dram_alloc {trnc.estimated_live = array<i64: 4000, 6000>} : memref<65536xf32>
  %t = nisa.alloc {address = 0 : i64} : !t
  %u = nisa.alloc {address = 2048 : i64} : !t
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %u <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.dma_copy %b <0, [512, 1], [128, 512]>, %u <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : memref<65536xf32>, memref<65536xf32>
  return
}

