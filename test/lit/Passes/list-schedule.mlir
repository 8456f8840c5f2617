// RUN: trnc-opt %s -split-input-file -trnc-pipeline-list-schedule | FileCheck %s
// RUN: trnc-opt %s -split-input-file -trnc-pipeline-list-schedule="memory-share=0.001" | FileCheck %s --check-prefix=TIGHT
// RUN: trnc-opt %s -split-input-file -trnc-pipeline-list-schedule="report=true" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

!t = !nisa.tile<sbuf, 128, 512, f32>

// Two independent load -> exp -> store chains. The load of tile 1 is
// hoisted above the store of tile 0 (which waits for exp 0), so it overlaps
// tile 0's compute; each chain keeps its own order. Each transfer takes the
// queue the schedule timed it on (the one that frees first), which the
// semaphore pass keeps. With no memory to spare the program order stays.
// CHECK-LABEL: func.func @two_tiles
// CHECK-COUNT-4: nisa.alloc
// CHECK: nisa.dma_copy %[[T0:.*]] <0, [512, 1], [128, 512]>, %arg0 <0,
// CHECK-SAME: {queue = 0 : i64}
// CHECK-NEXT: nisa.dma_copy %[[T1:.*]] <0, [512, 1], [128, 512]>, %arg0 <65536,
// CHECK-SAME: {queue = 1 : i64}
// CHECK-NEXT: nisa.activation exp %[[U0:.*]] <0, [512, 1], [128, 512]>, %[[T0]]
// CHECK-NEXT: nisa.dma_copy %arg1 <0, {{.*}}, %[[U0]]
// CHECK-NEXT: nisa.activation exp %[[U1:.*]] <0, [512, 1], [128, 512]>, %[[T1]]
// CHECK-NEXT: nisa.dma_copy %arg1 <65536, {{.*}}, %[[U1]]
// TIGHT-LABEL: func.func @two_tiles
// TIGHT: nisa.dma_copy
// TIGHT-NEXT: nisa.activation
// TIGHT-NEXT: nisa.dma_copy
// TIGHT-NEXT: nisa.dma_copy
func.func @two_tiles(%in: memref<131072xf32> {nisa.input = 0 : i64},
                     %out: memref<131072xf32> {nisa.output = 0 : i64}) {
  %t0 = nisa.alloc : !t
  %u0 = nisa.alloc : !t
  nisa.dma_copy %t0 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %u0 <0, [512, 1], [128, 512]>, %t0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %u0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  %t1 = nisa.alloc : !t
  %u1 = nisa.alloc : !t
  nisa.dma_copy %t1 <0, [512, 1], [128, 512]>, %in <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %u1 <0, [512, 1], [128, 512]>, %t1 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <65536, [512, 1], [128, 512]>, %u1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// Dependences through memory hold: the second load reads what the store
// wrote to the scratch buffer (read after write in HBM), so nothing moves.
// The scratch buffer records when, in the estimated timeline, its first
// access starts and its last ends (ns), for trnc-pack-scratch: the store
// after the load and the exp, the load back before the second exp.
// CHECK-LABEL: func.func @through_hbm
// CHECK: nisa.dram_alloc {trnc.estimated_live = array<i64: [[START:[0-9]+]], [[END:[0-9]+]]>}
// CHECK: nisa.dma_copy %[[A:.*]] <0, [512, 1], [128, 512]>, %arg0
// CHECK-NEXT: nisa.activation exp %[[B:.*]] <0, {{.*}}, %[[A]]
// CHECK-NEXT: nisa.dma_copy %[[S:.*]] <0, [512, 1], [128, 512]>, %[[B]]
// CHECK-NEXT: nisa.dma_copy %[[C:.*]] <0, [512, 1], [128, 512]>, %[[S]]
// CHECK-NEXT: nisa.activation exp %[[D:.*]] <0, {{.*}}, %[[C]]
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [512, 1], [128, 512]>, %[[D]]
func.func @through_hbm(%in: memref<65536xf32> {nisa.input = 0 : i64},
                       %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<65536xf32>
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  %c = nisa.alloc : !t
  %d = nisa.alloc : !t
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.activation exp %d <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %d <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>
!p = !nisa.tile<psum, 128, 512, f32>

// Independent ALU work ready at once: while Vector runs the first add,
// GpSimd (slower per element, but free) finishes the second sooner. A copy
// out of PSUM may go to Scalar but never to GpSimd, which cannot reach PSUM.
// CHECK-LABEL: func.func @engines
// CHECK: nisa.tensor_tensor add {{.*}} on vector
// CHECK-NEXT: nisa.tensor_tensor add {{.*}} on gpsimd
// CHECK: nisa.tensor_copy {{.*}} on {{vector|scalar}}
// CHECK: nisa.tensor_copy {{.*}} on {{vector|scalar}}
func.func @engines(%out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  %c = nisa.alloc : !t
  %d = nisa.alloc : !t
  %q = nisa.alloc : !p
  %e = nisa.alloc : !t
  %f = nisa.alloc : !t
  nisa.tensor_tensor add %c <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> on vector : !t, !t, !t
  nisa.tensor_tensor add %d <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> on vector : !t, !t, !t
  nisa.tensor_copy %e <0, [512, 1], [128, 512]>, %q <0, [512, 1], [128, 512]> on vector : !t, !p
  nisa.tensor_copy %f <0, [512, 1], [128, 512]>, %q <0, [512, 1], [128, 512]> on vector : !t, !p
  return
}

// -----

// Stores are not starved when the budget is full. The load of %x reads
// what the first store wrote, so it waits in the DMA queue ahead of the
// other stores; it does not fit the budget. Forcing the ready loads past
// the budget instead (the DMA stream's time never advancing to the stores
// behind %x) kept every tile live to the end; the store that frees memory
// goes first: each tile is stored before the next one is loaded.
// CHECK-LABEL: func.func @stores_not_starved
// TIGHT-LABEL: func.func @stores_not_starved
// TIGHT: nisa.activation exp %[[U0:[0-9]+]]
// TIGHT-NEXT: nisa.dma_copy %arg1 <0, {{.*}}, %[[U0]]
// TIGHT-NEXT: nisa.dma_copy %{{[0-9]+}} {{.*}}, %arg0 <262144,
// TIGHT-NEXT: nisa.activation exp %[[U1:[0-9]+]]
// TIGHT-NEXT: nisa.dma_copy %arg1 <262144, {{.*}}, %[[U1]]
// TIGHT-NEXT: nisa.dma_copy %{{[0-9]+}} {{.*}}, %arg0 <524288,
// TIGHT-NEXT: nisa.activation exp %[[U2:[0-9]+]]
// TIGHT-NEXT: nisa.dma_copy %arg1 <524288, {{.*}}, %[[U2]]
!t = !nisa.tile<sbuf, 128, 2048, f32>
func.func @stores_not_starved(%in: memref<786432xf32> {nisa.input = 0 : i64}, %out: memref<786432xf32> {nisa.output = 0 : i64}, %out2: memref<262144xf32> {nisa.output = 1 : i64}) {
  %a0 = nisa.alloc : !t
  %u0 = nisa.alloc : !t
  nisa.dma_copy %a0 <0, [2048, 1], [128, 2048]>, %in <0, [2048, 1], [128, 2048]> : !t, memref<786432xf32>
  nisa.activation exp %u0 <0, [2048, 1], [128, 2048]>, %a0 <0, [2048, 1], [128, 2048]> : !t, !t
  nisa.dma_copy %out <0, [2048, 1], [128, 2048]>, %u0 <0, [2048, 1], [128, 2048]> : memref<786432xf32>, !t
  %a1 = nisa.alloc : !t
  %u1 = nisa.alloc : !t
  nisa.dma_copy %a1 <0, [2048, 1], [128, 2048]>, %in <262144, [2048, 1], [128, 2048]> : !t, memref<786432xf32>
  nisa.activation exp %u1 <0, [2048, 1], [128, 2048]>, %a1 <0, [2048, 1], [128, 2048]> : !t, !t
  nisa.dma_copy %out <262144, [2048, 1], [128, 2048]>, %u1 <0, [2048, 1], [128, 2048]> : memref<786432xf32>, !t
  %a2 = nisa.alloc : !t
  %u2 = nisa.alloc : !t
  nisa.dma_copy %a2 <0, [2048, 1], [128, 2048]>, %in <524288, [2048, 1], [128, 2048]> : !t, memref<786432xf32>
  nisa.activation exp %u2 <0, [2048, 1], [128, 2048]>, %a2 <0, [2048, 1], [128, 2048]> : !t, !t
  nisa.dma_copy %out <524288, [2048, 1], [128, 2048]>, %u2 <0, [2048, 1], [128, 2048]> : memref<786432xf32>, !t
  %x = nisa.alloc : !t
  %y = nisa.alloc : !t
  nisa.dma_copy %x <0, [2048, 1], [128, 2048]>, %out <0, [2048, 1], [128, 2048]> : !t, memref<786432xf32>
  nisa.activation tanh %y <0, [2048, 1], [128, 2048]>, %x <0, [2048, 1], [128, 2048]> : !t, !t
  nisa.dma_copy %out2 <0, [2048, 1], [128, 2048]>, %y <0, [2048, 1], [128, 2048]> : memref<262144xf32>, !t
  return
}

// -----

// Placement as the schedule goes: when %c needs 100 KiB, both big tiles are
// dead, but the store of %a (12.8 MB) is still reading its bytes while %b's
// last reader (a 32 KiB slice) finished long ago. %c goes where only %b lived
// (first fit from the cursor would wrap to 0 and wait for the store); the
// allocator keeps these addresses.
// CHECK-LABEL: func.func @reuse_cool
// CHECK-NEXT: nisa.alloc {address = 0 : i64} : <sbuf, 128, 25600, f32>
// CHECK-NEXT: nisa.alloc {address = 102400 : i64} : <sbuf, 128, 25600, f32>
// CHECK-NEXT: nisa.alloc {address = 126976 : i64} : <sbuf, 128, 25600, f32>
!big = !nisa.tile<sbuf, 128, 25600, f32>
!small = !nisa.tile<sbuf, 128, 512, f32>

func.func @reuse_cool(%in: memref<65536xf32> {nisa.input = 0 : i64},
                      %o0: memref<3276800xf32> {nisa.output = 0 : i64},
                      %o1: memref<8192xf32> {nisa.output = 1 : i64},
                      %o2: memref<3276800xf32> {nisa.output = 2 : i64},
                      %o3: memref<65536xf32> {nisa.output = 3 : i64}) {
  %a = nisa.alloc : !big
  %b = nisa.alloc : !big
  %c = nisa.alloc : !big
  %s = nisa.alloc : !small
  %u = nisa.alloc : !small
  nisa.memset %a <0, [25600, 1], [128, 25600]>, 0.0 on vector : !big
  nisa.memset %b <0, [25600, 1], [128, 25600]>, 1.0 on gpsimd : !big
  nisa.dma_copy %o0 <0, [25600, 1], [128, 25600]>, %a <0, [25600, 1], [128, 25600]> : memref<3276800xf32>, !big
  nisa.dma_copy %o1 <0, [64, 1], [128, 64]>, %b <0, [25600, 1], [128, 64]> : memref<8192xf32>, !big
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !small, memref<65536xf32>
  nisa.activation exp %u <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : !small, !small
  nisa.dma_copy %o3 <0, [512, 1], [128, 512]>, %u <0, [512, 1], [128, 512]> : memref<65536xf32>, !small
  nisa.memset %c <0, [25600, 1], [128, 25600]>, 2.0 on gpsimd : !big
  nisa.dma_copy %o2 <0, [25600, 1], [128, 25600]>, %c <0, [25600, 1], [128, 25600]> : memref<3276800xf32>, !big
  return
}

// -----

// Priority by critical path: 36 short transfers come first in program order,
// but the load feeding twelve long activations has the longest path to the
// end. The graph is small, so it is also scheduled with transfers taken by
// that path (engines still in program order), and that schedule wins: the
// wide load goes first and the activations overlap the short transfers
// (estimated 108 us, against 285 us taking transfers in program order).
// CHECK-LABEL: func.func @critical_path
// CHECK-COUNT-20: nisa.alloc
// CHECK-NEXT: nisa.dma_copy %{{.*}} <0, [8192, 1], [128, 8192]>, %arg1
!row = !nisa.tile<sbuf, 128, 512, f32>
!wide = !nisa.tile<sbuf, 128, 8192, f32>

func.func @critical_path(%in: memref<65536xf32> {nisa.input = 0 : i64},
                         %win: memref<1048576xf32> {nisa.input = 1 : i64},
                         %out: memref<1179648xf32> {nisa.output = 0 : i64},
                         %wout: memref<1048576xf32> {nisa.output = 1 : i64}) {
  %r0 = nisa.alloc : !row
  %r1 = nisa.alloc : !row
  %r2 = nisa.alloc : !row
  %r3 = nisa.alloc : !row
  %r4 = nisa.alloc : !row
  %r5 = nisa.alloc : !row
  %r6 = nisa.alloc : !row
  %r7 = nisa.alloc : !row
  %r8 = nisa.alloc : !row
  %r9 = nisa.alloc : !row
  %r10 = nisa.alloc : !row
  %r11 = nisa.alloc : !row
  %r12 = nisa.alloc : !row
  %r13 = nisa.alloc : !row
  %r14 = nisa.alloc : !row
  %r15 = nisa.alloc : !row
  %r16 = nisa.alloc : !row
  %r17 = nisa.alloc : !row
  %w0 = nisa.alloc : !wide
  %w1 = nisa.alloc : !wide
  nisa.dma_copy %r0 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r1 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r2 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r3 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r4 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r5 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r6 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r7 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r8 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r9 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r10 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r11 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r12 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r13 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r14 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r15 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r16 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %r17 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !row, memref<65536xf32>
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %r0 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <65536, [512, 1], [128, 512]>, %r1 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <131072, [512, 1], [128, 512]>, %r2 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <196608, [512, 1], [128, 512]>, %r3 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <262144, [512, 1], [128, 512]>, %r4 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <327680, [512, 1], [128, 512]>, %r5 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <393216, [512, 1], [128, 512]>, %r6 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <458752, [512, 1], [128, 512]>, %r7 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <524288, [512, 1], [128, 512]>, %r8 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <589824, [512, 1], [128, 512]>, %r9 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <655360, [512, 1], [128, 512]>, %r10 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <720896, [512, 1], [128, 512]>, %r11 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <786432, [512, 1], [128, 512]>, %r12 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <851968, [512, 1], [128, 512]>, %r13 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <917504, [512, 1], [128, 512]>, %r14 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <983040, [512, 1], [128, 512]>, %r15 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <1048576, [512, 1], [128, 512]>, %r16 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %out <1114112, [512, 1], [128, 512]>, %r17 <0, [512, 1], [128, 512]> : memref<1179648xf32>, !row
  nisa.dma_copy %w0 <0, [8192, 1], [128, 8192]>, %win <0, [8192, 1], [128, 8192]> : !wide, memref<1048576xf32>
  nisa.activation exp %w1 <0, [8192, 1], [128, 8192]>, %w0 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation tanh %w0 <0, [8192, 1], [128, 8192]>, %w1 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation exp %w1 <0, [8192, 1], [128, 8192]>, %w0 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation tanh %w0 <0, [8192, 1], [128, 8192]>, %w1 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation exp %w1 <0, [8192, 1], [128, 8192]>, %w0 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation tanh %w0 <0, [8192, 1], [128, 8192]>, %w1 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation exp %w1 <0, [8192, 1], [128, 8192]>, %w0 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation tanh %w0 <0, [8192, 1], [128, 8192]>, %w1 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation exp %w1 <0, [8192, 1], [128, 8192]>, %w0 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation tanh %w0 <0, [8192, 1], [128, 8192]>, %w1 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation exp %w1 <0, [8192, 1], [128, 8192]>, %w0 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.activation tanh %w0 <0, [8192, 1], [128, 8192]>, %w1 <0, [8192, 1], [128, 8192]> : !wide, !wide
  nisa.dma_copy %wout <0, [8192, 1], [128, 8192]>, %w0 <0, [8192, 1], [128, 8192]> : memref<1048576xf32>, !wide
  return
}

// -----

!r = !nisa.tile<sbuf, 128, 512, f32>
!i = !nisa.tile<sbuf, 128, 1, i32>

// Two scatters of equal rows to the same indices: the first scatters a
// Scalar copy of the loaded rows, the second the loaded rows themselves.
// Idempotent, they are unordered, and the second, ready first, goes before
// the copy; plain, it waits for the first (write after write).
// CHECK-LABEL: func.func @idempotent_scatters
// CHECK: nisa.dma_scatter %arg2 <0, [512, 1], [128, 512]>, %[[ROWS:[0-9]+]] {{.*}} idempotent
// CHECK-NEXT: nisa.activation copy %[[COPY:[0-9]+]] <0, [512, 1], [128, 512]>, %[[ROWS]]
// CHECK-NEXT: nisa.dma_scatter %arg2 <0, [512, 1], [128, 512]>, %[[COPY]] {{.*}} idempotent
func.func @idempotent_scatters(%idx: memref<128xi32> {nisa.input = 0 : i64},
                               %rows: memref<65536xf32> {nisa.input = 1 : i64},
                               %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %i = nisa.alloc : !i
  %t = nisa.alloc : !r
  %c = nisa.alloc : !r
  nisa.dma_copy %i <0, [1, 1], [128, 1]>, %idx <0, [1, 1], [128, 1]> : !i, memref<128xi32>
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %rows <0, [512, 1], [128, 512]> : !r, memref<65536xf32>
  nisa.activation copy %c <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !r, !r
  nisa.dma_scatter %out <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]>, %i <0, [1, 1], [128, 1]> idempotent : memref<65536xf32>, !r, !i
  nisa.dma_scatter %out <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %i <0, [1, 1], [128, 1]> idempotent : memref<65536xf32>, !r, !i
  return
}

// CHECK-LABEL: func.func @plain_scatters
// CHECK: nisa.activation copy %[[COPY:[0-9]+]] <0, [512, 1], [128, 512]>, %[[ROWS:[0-9]+]]
// CHECK-NEXT: nisa.dma_scatter %arg2 <0, [512, 1], [128, 512]>, %[[COPY]]
// CHECK-NEXT: nisa.dma_scatter %arg2 <0, [512, 1], [128, 512]>, %[[ROWS]]
func.func @plain_scatters(%idx: memref<128xi32> {nisa.input = 0 : i64},
                          %rows: memref<65536xf32> {nisa.input = 1 : i64},
                          %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %i = nisa.alloc : !i
  %t = nisa.alloc : !r
  %c = nisa.alloc : !r
  nisa.dma_copy %i <0, [1, 1], [128, 1]>, %idx <0, [1, 1], [128, 1]> : !i, memref<128xi32>
  nisa.dma_copy %t <0, [512, 1], [128, 512]>, %rows <0, [512, 1], [128, 512]> : !r, memref<65536xf32>
  nisa.activation copy %c <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !r, !r
  nisa.dma_scatter %out <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]>, %i <0, [1, 1], [128, 1]> : memref<65536xf32>, !r, !i
  nisa.dma_scatter %out <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %i <0, [1, 1], [128, 1]> : memref<65536xf32>, !r, !i
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// A core's half of a graph split over two logical cores (it holds the
// cross-core barrier) is also scheduled with a shallower prefetch, two
// thirds of memory-share, and the faster estimate kept; no other function
// of this file is.
// REPORT: list schedule: program order {{[0-9]+}} ns; index priority, budget 0.75: {{[0-9]+}} ns; {{.*}}index priority, budget 0.50 (a split core): {{[0-9]+}} ns; kept
// REPORT-NOT: (a split core)
func.func @split_core(%in: memref<131072xf32> {nisa.input = 0 : i64},
                      %out: memref<131072xf32> {nisa.output = 0 : i64}) {
  %t0 = nisa.alloc : !t
  %u0 = nisa.alloc : !t
  nisa.dma_copy %t0 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %u0 <0, [512, 1], [128, 512]>, %t0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %u0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.peer_signal {semaphore = 21 : i64}
  nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
  %t1 = nisa.alloc : !t
  %u1 = nisa.alloc : !t
  nisa.dma_copy %t1 <0, [512, 1], [128, 512]>, %in <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %u1 <0, [512, 1], [128, 512]>, %t1 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <65536, [512, 1], [128, 512]>, %u1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  return
}
