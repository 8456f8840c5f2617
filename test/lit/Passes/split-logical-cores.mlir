// RUN: trnc-opt %s -split-input-file -trnc-pipeline-split-logical-cores="always-split=1" -verify-diagnostics | FileCheck %s
// RUN: trnc-opt %s -split-input-file -trnc-pipeline-split-logical-cores -verify-diagnostics | FileCheck %s --check-prefix=ESTIMATE

!t = !nisa.tile<sbuf, 128, 512, f32>

// An elementwise chain, exp then tanh through scratch, over two row tiles:
// each core computes one row tile of both ops and reads back only the rows
// it wrote, so there is no barrier. Each core has half the work: the split
// is kept without always-split too.
// ESTIMATE-LABEL: module attributes {trnc.lnc = 2 : i64}
// ESTIMATE: func.func @main_core1(
// ESTIMATE-NEXT: nisa.dram_alloc
// ESTIMATE: nisa.activation exp
// ESTIMATE: nisa.activation tanh
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main({{.*}} attributes {trnc.core = 0 : i64}
// CHECK: nisa.dram_alloc {trnc.scratch = 0 : i64}
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg0 <0, [512, 1], [128, 512]>
// CHECK-NEXT: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <0,
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <0, [512, 1], [128, 512]>
// CHECK-NEXT: nisa.activation tanh
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [512, 1], [128, 512]>
// CHECK-NEXT: return
// CHECK: func.func @main_core1({{.*}} attributes {trnc.core = 1 : i64}
// CHECK: nisa.dram_alloc {trnc.scratch = 0 : i64}
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg0 <65536, [512, 1], [128, 512]>
// CHECK-NEXT: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <65536,
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <65536,
// CHECK-NEXT: nisa.activation tanh
// CHECK-NEXT: nisa.dma_copy %arg1 <65536, [512, 1], [128, 512]>
// CHECK-NEXT: return
module {
func.func @main(%in: memref<131072xf32> {nisa.input = 0 : i64},
                %out: memref<131072xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<131072xf32>
  %a0 = nisa.alloc : !t
  %b0 = nisa.alloc : !t
  %a1 = nisa.alloc : !t
  %b1 = nisa.alloc : !t
  %c0 = nisa.alloc : !t
  %d0 = nisa.alloc : !t
  %c1 = nisa.alloc : !t
  %d1 = nisa.alloc : !t
  nisa.dma_copy %a0 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %b0 <0, [512, 1], [128, 512]>, %a0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %a1 <0, [512, 1], [128, 512]>, %in <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %b1 <0, [512, 1], [128, 512]>, %a1 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <65536, [512, 1], [128, 512]>, %b1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %c0 <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation tanh %d0 <0, [512, 1], [128, 512]>, %c0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %d0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %c1 <0, [512, 1], [128, 512]>, %s <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation tanh %d1 <0, [512, 1], [128, 512]>, %c1 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <65536, [512, 1], [128, 512]>, %d1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  return
}
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// The second op swaps the row tiles (out rows 0..127 = tanh of scratch rows
// 128..255): core 0 reads rows core 1 wrote, so one barrier goes just
// before the first load of the second op, in both copies.
// Estimated (without always-split): the two row tiles' chains already
// overlap on one core's DMA queues, and the barrier (three fixed costs)
// outweighs halving them, so everything stays on core 0.
// ESTIMATE-LABEL: module attributes {trnc.lnc = 2 : i64}
// ESTIMATE: func.func @main(
// ESTIMATE-NOT: nisa.peer_signal
// ESTIMATE-COUNT-2: nisa.activation exp
// ESTIMATE-COUNT-2: nisa.activation tanh
// ESTIMATE: func.func @main_core1(
// ESTIMATE-NEXT: nisa.dram_alloc
// ESTIMATE-NEXT: return
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0,
// CHECK-NEXT: nisa.peer_signal {semaphore = 21 : i64}
// CHECK-NEXT: nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <65536,
// CHECK-NEXT: nisa.activation tanh
// CHECK-NEXT: nisa.dma_copy %arg1 <0,
// CHECK-NOT: nisa.peer_signal
// CHECK: func.func @main_core1(
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <65536,
// CHECK-NEXT: nisa.peer_signal {semaphore = 21 : i64}
// CHECK-NEXT: nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <0,
// CHECK-NEXT: nisa.activation tanh
// CHECK-NEXT: nisa.dma_copy %arg1 <65536,
// CHECK-NOT: nisa.peer_signal
module {
func.func @main(%in: memref<131072xf32> {nisa.input = 0 : i64},
                %out: memref<131072xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<131072xf32>
  %a0 = nisa.alloc : !t
  %b0 = nisa.alloc : !t
  %a1 = nisa.alloc : !t
  %b1 = nisa.alloc : !t
  %c0 = nisa.alloc : !t
  %d0 = nisa.alloc : !t
  %c1 = nisa.alloc : !t
  %d1 = nisa.alloc : !t
  nisa.dma_copy %a0 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %b0 <0, [512, 1], [128, 512]>, %a0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %a1 <0, [512, 1], [128, 512]>, %in <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %b1 <0, [512, 1], [128, 512]>, %a1 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <65536, [512, 1], [128, 512]>, %b1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %c0 <0, [512, 1], [128, 512]>, %s <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation tanh %d0 <0, [512, 1], [128, 512]>, %c0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %d0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %c1 <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation tanh %d1 <0, [512, 1], [128, 512]>, %c1 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <65536, [512, 1], [128, 512]>, %d1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  return
}
}

// -----

!b = !nisa.tile<sbuf, 128, 512, bf16>
!a = !nisa.tile<sbuf, 128, 128, bf16>
!p = !nisa.tile<psum, 128, 512, f32>
!o = !nisa.tile<sbuf, 128, 512, f32>

// out[256, 512] = a[256, 128] @ b[128, 512]: each core computes one row
// tile and loads its own rows of a^T; b is needed by both row tiles, so
// both cores load it (SBUF is per core). Nothing is read across cores.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg1
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [128, 1], [128, 128]>, %arg0 <0, [1, 128], [128, 128]>
// CHECK-NEXT: nisa.matmul
// CHECK-NEXT: nisa.tensor_copy
// CHECK-NEXT: nisa.dma_copy %arg2 <0,
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg1
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [128, 1], [128, 128]>, %arg0 <16384, [1, 128], [128, 128]>
// CHECK-NEXT: nisa.matmul
// CHECK-NEXT: nisa.tensor_copy
// CHECK-NEXT: nisa.dma_copy %arg2 <65536,
// CHECK-NEXT: return
module {
func.func @main(%a: memref<32768xbf16> {nisa.input = 0 : i64},
                %b: memref<65536xbf16> {nisa.input = 1 : i64},
                %out: memref<131072xf32> {nisa.output = 0 : i64}) {
  %bt = nisa.alloc : !b
  %a0 = nisa.alloc : !a
  %a1 = nisa.alloc : !a
  %p0 = nisa.alloc : !p
  %p1 = nisa.alloc : !p
  %o0 = nisa.alloc : !o
  %o1 = nisa.alloc : !o
  nisa.dma_copy %bt <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : !b, memref<65536xbf16>
  nisa.dma_copy %a0 <0, [128, 1], [128, 128]>, %a <0, [1, 128], [128, 128]> : !a, memref<32768xbf16>
  nisa.matmul %p0 <0, [512, 1], [128, 512]>, %a0 <0, [128, 1], [128, 128]>, %bt <0, [512, 1], [128, 512]> : !p, !a, !b
  nisa.tensor_copy %o0 <0, [512, 1], [128, 512]>, %p0 <0, [512, 1], [128, 512]> on scalar : !o, !p
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %o0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !o
  nisa.dma_copy %a1 <0, [128, 1], [128, 128]>, %a <16384, [1, 128], [128, 128]> : !a, memref<32768xbf16>
  nisa.matmul %p1 <0, [512, 1], [128, 512]>, %a1 <0, [128, 1], [128, 128]>, %bt <0, [512, 1], [128, 512]> : !p, !a, !b
  nisa.tensor_copy %o1 <0, [512, 1], [128, 512]>, %p1 <0, [512, 1], [128, 512]> on scalar : !o, !p
  nisa.dma_copy %out <65536, [512, 1], [128, 512]>, %o1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !o
  return
}
}

// -----

// expected-error @+1 {{the split over logical cores needs a func.func @main of one block}}
module {
func.func @other() {
  return
}
}

// -----

!t = !nisa.tile<sbuf, 128, 256, f32>
!r = !nisa.tile<sbuf, 128, 2, f32>

// exp of x[256, 128] and its row sums, each output stored by one transfer
// (rows p and 128 + p share partition p). The loads, exp, the row sum and
// both stores are cut in halves of their free elements, rows 0..127 on
// core 0 and 128..255 on core 1: each core reads only what it needs and
// writes only its rows, so there is no barrier.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [256, 1], [128, 128]>, %arg0 <0, [128, 16384, 1], [128, 1, 128]>
// CHECK-NEXT: nisa.activation exp %{{[0-9]+}} <0, [256, 1], [128, 128]>, %{{[0-9]+}} <0, [256, 1], [128, 128]>
// CHECK-NEXT: nisa.tensor_reduce add %{{[0-9]+}} <0, [2, 1], [128, 1]>, %{{[0-9]+}} <0, [256, 128, 1], [128, 1, 128]>
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [128, 16384, 1], [128, 1, 128]>, %{{[0-9]+}} <0, [256, 1], [128, 128]>
// CHECK-NEXT: nisa.dma_copy %arg2 <0, [1, 128], [128, 1]>, %{{[0-9]+}} <0, [2, 1], [128, 1]>
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <128, [256, 1], [128, 128]>, %arg0 <16384, [128, 16384, 1], [128, 1, 128]>
// CHECK-NEXT: nisa.activation exp %{{[0-9]+}} <128, [256, 1], [128, 128]>, %{{[0-9]+}} <128, [256, 1], [128, 128]>
// CHECK-NEXT: nisa.tensor_reduce add %{{[0-9]+}} <1, [2, 1], [128, 1]>, %{{[0-9]+}} <128, [256, 128, 1], [128, 1, 128]>
// CHECK-NEXT: nisa.dma_copy %arg1 <16384, [128, 16384, 1], [128, 1, 128]>, %{{[0-9]+}} <128, [256, 1], [128, 128]>
// CHECK-NEXT: nisa.dma_copy %arg2 <128, [1, 128], [128, 1]>, %{{[0-9]+}} <1, [2, 1], [128, 1]>
// CHECK-NEXT: return
module {
func.func @main(%in: memref<32768xf32> {nisa.input = 0 : i64},
                %out: memref<32768xf32> {nisa.output = 0 : i64},
                %sums: memref<256xf32> {nisa.output = 1 : i64}) {
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  %s = nisa.alloc : !r
  nisa.dma_copy %a <0, [256, 1], [128, 256]>, %in <0, [128, 16384, 1], [128, 2, 128]> : !t, memref<32768xf32>
  nisa.activation exp %b <0, [256, 1], [128, 256]>, %a <0, [256, 1], [128, 256]> : !t, !t
  nisa.tensor_reduce add %s <0, [2, 1], [128, 2]>, %b <0, [256, 128, 1], [128, 2, 128]> on vector : !r, !t
  nisa.dma_copy %out <0, [128, 16384, 1], [128, 2, 128]>, %b <0, [256, 1], [128, 256]> : memref<32768xf32>, !t
  nisa.dma_copy %sums <0, [1, 128], [128, 2]>, %s <0, [2, 1], [128, 2]> : memref<256xf32>, !r
  return
}
}

// -----

!t = !nisa.tile<sbuf, 128, 256, f32>
!w = !nisa.tile<sbuf, 128, 128, f32>
!p = !nisa.tile<psum, 128, 256, f32>

// The same exp, stored by one transfer to scratch that a matmul then reads
// whole as its moving operand (its columns are the exp's two batches). The
// matmul's chain is cut over its output columns together with the exp's
// (joined through the scratch buffer), so each core reads back the batch
// it stored and computes half of the output's columns: no barrier. (Before
// matmuls could be cut, everything stayed on core 0: halving the exp alone
// would have had core 0 read the half core 1 wrote.)
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [256, 1], [128, 128]>, %arg0 <0, [128, 16384, 1], [128, 1, 128]>
// CHECK-NEXT: nisa.activation exp %{{[0-9]+}} <0, [256, 1], [128, 128]>
// CHECK-NEXT: nisa.dma_copy %[[S0:[0-9]+]] <0, [128, 16384, 1], [128, 1, 128]>
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [256, 1], [128, 128]>, %[[S0]] <0, [1, 128], [128, 128]>
// CHECK: nisa.matmul %{{[0-9]+}} <0, [256, 1], [128, 128]>
// CHECK: nisa.dma_copy %arg2 <0, [256, 1], [128, 128]>
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <128, [256, 1], [128, 128]>, %arg0 <16384, [128, 16384, 1], [128, 1, 128]>
// CHECK-NEXT: nisa.activation exp %{{[0-9]+}} <128, [256, 1], [128, 128]>
// CHECK-NEXT: nisa.dma_copy %[[S1:[0-9]+]] <16384, [128, 16384, 1], [128, 1, 128]>
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <128, [256, 1], [128, 128]>, %[[S1]] <16384, [1, 128], [128, 128]>
// CHECK: nisa.matmul %{{[0-9]+}} <128, [256, 1], [128, 128]>
// CHECK: nisa.dma_copy %arg2 <128, [256, 1], [128, 128]>
// CHECK-NEXT: return
module {
func.func @main(%in: memref<32768xf32> {nisa.input = 0 : i64},
                %wt: memref<16384xf32> {nisa.input = 1 : i64},
                %out: memref<32768xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<32768xf32>
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  %c = nisa.alloc : !t
  %w = nisa.alloc : !w
  %p = nisa.alloc : !p
  %o = nisa.alloc : !t
  nisa.dma_copy %a <0, [256, 1], [128, 256]>, %in <0, [128, 16384, 1], [128, 2, 128]> : !t, memref<32768xf32>
  nisa.activation exp %b <0, [256, 1], [128, 256]>, %a <0, [256, 1], [128, 256]> : !t, !t
  nisa.dma_copy %s <0, [128, 16384, 1], [128, 2, 128]>, %b <0, [256, 1], [128, 256]> : memref<32768xf32>, !t
  nisa.dma_copy %c <0, [256, 1], [128, 256]>, %s <0, [1, 128], [128, 256]> : !t, memref<32768xf32>
  nisa.dma_copy %w <0, [128, 1], [128, 128]>, %wt <0, [128, 1], [128, 128]> : !w, memref<16384xf32>
  nisa.matmul %p <0, [256, 1], [128, 256]>, %w <0, [128, 1], [128, 128]>, %c <0, [256, 1], [128, 256]> : !p, !w, !t
  nisa.tensor_copy %o <0, [256, 1], [128, 256]>, %p <0, [256, 1], [128, 256]> on scalar : !t, !p
  nisa.dma_copy %out <0, [256, 1], [128, 256]>, %o <0, [256, 1], [128, 256]> : memref<32768xf32>, !t
  return
}
}

// -----

!a = !nisa.tile<sbuf, 128, 128, f32>
!t = !nisa.tile<sbuf, 128, 256, f32>
!q = !nisa.tile<psum, 128, 256, f32>
!p = !nisa.tile<psum, 128, 128, f32>

// out[256, 128] = x[256, 128] @ w: x^T is built from both row blocks of x
// by two Tensor Engine transposes into one PSUM tile, copied out whole, and
// each row tile's matmul reads its half. Both cores ran that copy, so both
// transposed and loaded all of x; the copy is cut in halves, and each core
// now loads and transposes only its own row block.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK-NOT: %arg0 <16384
// CHECK: nisa.tensor_copy %{{[0-9]+}} <0, [256, 1], [128, 128]>, %{{[0-9]+}} <0, [256, 1], [128, 128]>
// CHECK-NOT: nisa.matmul {{.*}} transpose
// CHECK: nisa.dma_copy %arg3 <0,
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK-NOT: %arg0 <0,
// CHECK: nisa.tensor_copy %{{[0-9]+}} <128, [256, 1], [128, 128]>, %{{[0-9]+}} <128, [256, 1], [128, 128]>
// CHECK-NOT: nisa.matmul {{.*}} transpose
// CHECK: nisa.dma_copy %arg3 <16384,
module {
func.func @main(%x: memref<32768xf32> {nisa.input = 0 : i64},
                %ident: memref<16384xf32> {nisa.input = 1 : i64},
                %w: memref<16384xf32> {nisa.input = 2 : i64},
                %out: memref<32768xf32> {nisa.output = 0 : i64}) {
  %id = nisa.alloc : !a
  %x0 = nisa.alloc : !a
  %x1 = nisa.alloc : !a
  %wt = nisa.alloc : !a
  %pt = nisa.alloc : !q
  %xt = nisa.alloc : !t
  %p0 = nisa.alloc : !p
  %p1 = nisa.alloc : !p
  %o0 = nisa.alloc : !a
  %o1 = nisa.alloc : !a
  nisa.dma_copy %id <0, [128, 1], [128, 128]>, %ident <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.dma_copy %x0 <0, [128, 1], [128, 128]>, %x <0, [128, 1], [128, 128]> : !a, memref<32768xf32>
  nisa.matmul %pt <0, [256, 1], [128, 128]>, %x0 <0, [128, 1], [128, 128]>, %id <0, [128, 1], [128, 128]> transpose : !q, !a, !a
  nisa.dma_copy %x1 <0, [128, 1], [128, 128]>, %x <16384, [128, 1], [128, 128]> : !a, memref<32768xf32>
  nisa.matmul %pt <128, [256, 1], [128, 128]>, %x1 <0, [128, 1], [128, 128]>, %id <0, [128, 1], [128, 128]> transpose : !q, !a, !a
  nisa.tensor_copy %xt <0, [256, 1], [128, 256]>, %pt <0, [256, 1], [128, 256]> on vector : !t, !q
  nisa.dma_copy %wt <0, [128, 1], [128, 128]>, %w <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.matmul %p0 <0, [128, 1], [128, 128]>, %xt <0, [256, 1], [128, 128]>, %wt <0, [128, 1], [128, 128]> : !p, !t, !a
  nisa.tensor_copy %o0 <0, [128, 1], [128, 128]>, %p0 <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out <0, [128, 1], [128, 128]>, %o0 <0, [128, 1], [128, 128]> : memref<32768xf32>, !a
  nisa.matmul %p1 <0, [128, 1], [128, 128]>, %xt <128, [256, 1], [128, 128]>, %wt <0, [128, 1], [128, 128]> : !p, !t, !a
  nisa.tensor_copy %o1 <0, [128, 1], [128, 128]>, %p1 <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out <16384, [128, 1], [128, 128]>, %o1 <0, [128, 1], [128, 128]> : memref<32768xf32>, !a
  return
}
}

// -----

!a = !nisa.tile<sbuf, 128, 128, f32>
!p = !nisa.tile<psum, 128, 128, f32>

// Two outputs of one transfer each, a matmul's row tile (like a weight
// gradient dW = dY^T X of one row tile): each is cut over its output
// columns, the matmul (half of the moving operand's columns), the copy out
// of PSUM and the store. Core 0 computes columns 0..63 and core 1 columns
// 64..127 of the same rows; each loads the stationary operand whole and its
// half of the moving one. The two cores' stores interleave in HBM but share
// no byte (rows x runs, not one element range): no barrier.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %[[A0:[0-9]+]] <0, [128, 1], [128, 128]>, %arg0 <0, [128, 1], [128, 128]>
// CHECK-NEXT: nisa.dma_copy %[[W0:[0-9]+]] <0, [128, 1], [128, 64]>, %arg2 <0, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.matmul %[[P0:[0-9]+]] <0, [128, 1], [128, 64]>, %[[A0]] <0, [128, 1], [128, 128]>, %[[W0]] <0, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.tensor_copy %[[O0:[0-9]+]] <0, [128, 1], [128, 64]>, %[[P0]] <0, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.dma_copy %arg3 <0, [128, 1], [128, 64]>, %[[O0]] <0, [128, 1], [128, 64]>
// CHECK: nisa.matmul %{{[0-9]+}} <0, [128, 1], [128, 64]>
// CHECK: nisa.dma_copy %arg4 <0, [128, 1], [128, 64]>
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %[[A1:[0-9]+]] <0, [128, 1], [128, 128]>, %arg0 <0, [128, 1], [128, 128]>
// CHECK-NEXT: nisa.dma_copy %[[W1:[0-9]+]] <64, [128, 1], [128, 64]>, %arg2 <64, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.matmul %[[P1:[0-9]+]] <64, [128, 1], [128, 64]>, %[[A1]] <0, [128, 1], [128, 128]>, %[[W1]] <64, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.tensor_copy %[[O1:[0-9]+]] <64, [128, 1], [128, 64]>, %[[P1]] <64, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.dma_copy %arg3 <64, [128, 1], [128, 64]>, %[[O1]] <64, [128, 1], [128, 64]>
// CHECK: nisa.matmul %{{[0-9]+}} <64, [128, 1], [128, 64]>
// CHECK: nisa.dma_copy %arg4 <64, [128, 1], [128, 64]>
// CHECK-NEXT: return
module {
func.func @main(%x0: memref<16384xf32> {nisa.input = 0 : i64},
                %x1: memref<16384xf32> {nisa.input = 1 : i64},
                %w: memref<16384xf32> {nisa.input = 2 : i64},
                %out0: memref<16384xf32> {nisa.output = 0 : i64},
                %out1: memref<16384xf32> {nisa.output = 1 : i64}) {
  %a0 = nisa.alloc : !a
  %a1 = nisa.alloc : !a
  %w0 = nisa.alloc : !a
  %w1 = nisa.alloc : !a
  %p0 = nisa.alloc : !p
  %p1 = nisa.alloc : !p
  %o0 = nisa.alloc : !a
  %o1 = nisa.alloc : !a
  nisa.dma_copy %a0 <0, [128, 1], [128, 128]>, %x0 <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.dma_copy %w0 <0, [128, 1], [128, 128]>, %w <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.matmul %p0 <0, [128, 1], [128, 128]>, %a0 <0, [128, 1], [128, 128]>, %w0 <0, [128, 1], [128, 128]> : !p, !a, !a
  nisa.tensor_copy %o0 <0, [128, 1], [128, 128]>, %p0 <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out0 <0, [128, 1], [128, 128]>, %o0 <0, [128, 1], [128, 128]> : memref<16384xf32>, !a
  nisa.dma_copy %a1 <0, [128, 1], [128, 128]>, %x1 <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.dma_copy %w1 <0, [128, 1], [128, 128]>, %w <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.matmul %p1 <0, [128, 1], [128, 128]>, %a1 <0, [128, 1], [128, 128]>, %w1 <0, [128, 1], [128, 128]> : !p, !a, !a
  nisa.tensor_copy %o1 <0, [128, 1], [128, 128]>, %p1 <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out1 <0, [128, 1], [128, 128]>, %o1 <0, [128, 1], [128, 128]> : memref<16384xf32>, !a
  return
}
}

// -----

!a = !nisa.tile<sbuf, 128, 128, f32>
!p = !nisa.tile<psum, 128, 128, f32>

// Two outputs of one transfer each that cannot be halved (Tensor Engine
// transposes: the moving operand is the identity): the first moves to
// core 1, which had no work, and the second stays on core 0. No barrier.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [128, 1], [128, 128]>, %arg1
// CHECK: nisa.matmul {{.*}} transpose
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %arg4 <0, [128, 1], [128, 128]>
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [128, 1], [128, 128]>, %arg0
// CHECK: nisa.matmul {{.*}} transpose
// CHECK-NOT: nisa.matmul
// CHECK: nisa.dma_copy %arg3 <0, [128, 1], [128, 128]>
// CHECK-NEXT: return
module {
func.func @main(%x0: memref<16384xf32> {nisa.input = 0 : i64},
                %x1: memref<16384xf32> {nisa.input = 1 : i64},
                %id: memref<16384xf32> {nisa.input = 2 : i64},
                %out0: memref<16384xf32> {nisa.output = 0 : i64},
                %out1: memref<16384xf32> {nisa.output = 1 : i64}) {
  %a0 = nisa.alloc : !a
  %a1 = nisa.alloc : !a
  %i0 = nisa.alloc : !a
  %i1 = nisa.alloc : !a
  %p0 = nisa.alloc : !p
  %p1 = nisa.alloc : !p
  %o0 = nisa.alloc : !a
  %o1 = nisa.alloc : !a
  nisa.dma_copy %a0 <0, [128, 1], [128, 128]>, %x0 <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.dma_copy %i0 <0, [128, 1], [128, 128]>, %id <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.matmul %p0 <0, [128, 1], [128, 128]>, %a0 <0, [128, 1], [128, 128]>, %i0 <0, [128, 1], [128, 128]> transpose : !p, !a, !a
  nisa.tensor_copy %o0 <0, [128, 1], [128, 128]>, %p0 <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out0 <0, [128, 1], [128, 128]>, %o0 <0, [128, 1], [128, 128]> : memref<16384xf32>, !a
  nisa.dma_copy %a1 <0, [128, 1], [128, 128]>, %x1 <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.dma_copy %i1 <0, [128, 1], [128, 128]>, %id <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.matmul %p1 <0, [128, 1], [128, 128]>, %a1 <0, [128, 1], [128, 128]>, %i1 <0, [128, 1], [128, 128]> transpose : !p, !a, !a
  nisa.tensor_copy %o1 <0, [128, 1], [128, 128]>, %p1 <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out1 <0, [128, 1], [128, 128]>, %o1 <0, [128, 1], [128, 128]> : memref<16384xf32>, !a
  return
}
}

// -----

!a = !nisa.tile<sbuf, 128, 128, f32>
!p = !nisa.tile<psum, 128, 128, f32>

// A column-split matmul's output read back through HBM scratch by an
// elementwise op: the two chains are cut together, so each core's tanh
// loads only the columns that core stored. With one element range per
// transfer, each load would have overlapped the other core's store (a
// barrier, so the cut would not be kept); with row runs, none.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.matmul %{{[0-9]+}} <0, [128, 1], [128, 64]>
// CHECK: nisa.dma_copy %[[S0:[0-9]+]] <0, [128, 1], [128, 64]>, %{{[0-9]+}} <0, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [128, 1], [128, 64]>, %[[S0]] <0, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.activation tanh
// CHECK-NEXT: nisa.dma_copy %arg2 <0, [128, 1], [128, 64]>
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.matmul %{{[0-9]+}} <64, [128, 1], [128, 64]>
// CHECK: nisa.dma_copy %[[S1:[0-9]+]] <64, [128, 1], [128, 64]>, %{{[0-9]+}} <64, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <64, [128, 1], [128, 64]>, %[[S1]] <64, [128, 1], [128, 64]>
// CHECK-NEXT: nisa.activation tanh
// CHECK-NEXT: nisa.dma_copy %arg2 <64, [128, 1], [128, 64]>
// CHECK-NEXT: return
module {
func.func @main(%dy: memref<16384xf32> {nisa.input = 0 : i64},
                %x: memref<16384xf32> {nisa.input = 1 : i64},
                %out: memref<16384xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<16384xf32>
  %a = nisa.alloc : !a
  %b = nisa.alloc : !a
  %p = nisa.alloc : !p
  %o = nisa.alloc : !a
  %c = nisa.alloc : !a
  %d = nisa.alloc : !a
  nisa.dma_copy %a <0, [128, 1], [128, 128]>, %dy <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.dma_copy %b <0, [128, 1], [128, 128]>, %x <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.matmul %p <0, [128, 1], [128, 128]>, %a <0, [128, 1], [128, 128]>, %b <0, [128, 1], [128, 128]> : !p, !a, !a
  nisa.tensor_copy %o <0, [128, 1], [128, 128]>, %p <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %s <0, [128, 1], [128, 128]>, %o <0, [128, 1], [128, 128]> : memref<16384xf32>, !a
  nisa.dma_copy %c <0, [128, 1], [128, 128]>, %s <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.activation tanh %d <0, [128, 1], [128, 128]>, %c <0, [128, 1], [128, 128]> : !a, !a
  nisa.dma_copy %out <0, [128, 1], [128, 128]>, %d <0, [128, 1], [128, 128]> : memref<16384xf32>, !a
  return
}
}

// -----

!r = !nisa.tile<sbuf, 128, 128, f32>
!t = !nisa.tile<sbuf, 128, 256, f32>

// Rows split by an earlier op, read back two rows per partition: exp's row
// tiles (rows 0..127 on core 0, 128..255 on core 1) go to scratch, which
// tanh reads as [128, 2 x 128] and stores by one transfer. Cut over its
// columns, tanh's halves would be the even and the odd rows, each reading
// rows of both cores (a barrier, as with tanh whole on one core); cut over
// its partitions, each core reads and stores the rows it wrote (partitions
// 0..63 are rows 0..127): no barrier. Each half's on-chip time is the
// whole's (per partition), which is cheaper than the barrier it saves here.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %[[S0:[0-9]+]] <0, [128, 1], [128, 128]>, %{{[0-9]+}} <0,
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [256, 1], [64, 256]>, %[[S0]] <0, [256, 1], [64, 256]>
// CHECK-NEXT: nisa.activation tanh %{{[0-9]+}} <0, [256, 1], [64, 256]>
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [256, 1], [64, 256]>
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %[[S1:[0-9]+]] <16384, [128, 1], [128, 128]>, %{{[0-9]+}} <0,
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <16384, [256, 1], [64, 256]>, %[[S1]] <16384, [256, 1], [64, 256]>
// CHECK-NEXT: nisa.activation tanh %{{[0-9]+}} <16384, [256, 1], [64, 256]>
// CHECK-NEXT: nisa.dma_copy %arg1 <16384, [256, 1], [64, 256]>
// CHECK-NEXT: return
module {
func.func @main(%in: memref<32768xf32> {nisa.input = 0 : i64},
                %out: memref<32768xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<32768xf32>
  %a0 = nisa.alloc : !r
  %b0 = nisa.alloc : !r
  %a1 = nisa.alloc : !r
  %b1 = nisa.alloc : !r
  %c = nisa.alloc : !t
  %d = nisa.alloc : !t
  nisa.dma_copy %a0 <0, [128, 1], [128, 128]>, %in <0, [128, 1], [128, 128]> : !r, memref<32768xf32>
  nisa.activation exp %b0 <0, [128, 1], [128, 128]>, %a0 <0, [128, 1], [128, 128]> : !r, !r
  nisa.dma_copy %s <0, [128, 1], [128, 128]>, %b0 <0, [128, 1], [128, 128]> : memref<32768xf32>, !r
  nisa.dma_copy %a1 <0, [128, 1], [128, 128]>, %in <16384, [128, 1], [128, 128]> : !r, memref<32768xf32>
  nisa.activation exp %b1 <0, [128, 1], [128, 128]>, %a1 <0, [128, 1], [128, 128]> : !r, !r
  nisa.dma_copy %s <16384, [128, 1], [128, 128]>, %b1 <0, [128, 1], [128, 128]> : memref<32768xf32>, !r
  nisa.dma_copy %c <0, [256, 1], [128, 256]>, %s <0, [256, 1], [128, 256]> : !t, memref<32768xf32>
  nisa.activation tanh %d <0, [256, 1], [128, 256]>, %c <0, [256, 1], [128, 256]> : !t, !t
  nisa.dma_copy %out <0, [256, 1], [128, 256]>, %d <0, [256, 1], [128, 256]> : memref<32768xf32>, !t
  return
}
}

// -----

!r = !nisa.tile<sbuf, 128, 128, f32>

// The same rows copied, HBM to HBM, two rows per partition to two outputs
// (a graph returning one result twice). Cutting either copy alone over its
// partitions leaves the other's conflict, so no barrier goes; the two are
// then cut together: each core copies the rows it wrote, no barrier.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %arg1 <0, [256, 1], [64, 256]>, %{{[0-9]+}} <0, [256, 1], [64, 256]>
// CHECK-NEXT: nisa.dma_copy %arg2 <0, [256, 1], [64, 256]>, %{{[0-9]+}} <0, [256, 1], [64, 256]>
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.peer_signal
// CHECK: nisa.dma_copy %arg1 <16384, [256, 1], [64, 256]>, %{{[0-9]+}} <16384, [256, 1], [64, 256]>
// CHECK-NEXT: nisa.dma_copy %arg2 <16384, [256, 1], [64, 256]>, %{{[0-9]+}} <16384, [256, 1], [64, 256]>
// CHECK-NEXT: return
module {
func.func @main(%in: memref<32768xf32> {nisa.input = 0 : i64},
                %out0: memref<32768xf32> {nisa.output = 0 : i64},
                %out1: memref<32768xf32> {nisa.output = 1 : i64}) {
  %s = nisa.dram_alloc : memref<32768xf32>
  %a0 = nisa.alloc : !r
  %b0 = nisa.alloc : !r
  %a1 = nisa.alloc : !r
  %b1 = nisa.alloc : !r
  nisa.dma_copy %a0 <0, [128, 1], [128, 128]>, %in <0, [128, 1], [128, 128]> : !r, memref<32768xf32>
  nisa.activation exp %b0 <0, [128, 1], [128, 128]>, %a0 <0, [128, 1], [128, 128]> : !r, !r
  nisa.dma_copy %s <0, [128, 1], [128, 128]>, %b0 <0, [128, 1], [128, 128]> : memref<32768xf32>, !r
  nisa.dma_copy %a1 <0, [128, 1], [128, 128]>, %in <16384, [128, 1], [128, 128]> : !r, memref<32768xf32>
  nisa.activation exp %b1 <0, [128, 1], [128, 128]>, %a1 <0, [128, 1], [128, 128]> : !r, !r
  nisa.dma_copy %s <16384, [128, 1], [128, 128]>, %b1 <0, [128, 1], [128, 128]> : memref<32768xf32>, !r
  nisa.dma_copy %out0 <0, [256, 1], [128, 256]>, %s <0, [256, 1], [128, 256]> : memref<32768xf32>, memref<32768xf32>
  nisa.dma_copy %out1 <0, [256, 1], [128, 256]>, %s <0, [256, 1], [128, 256]> : memref<32768xf32>, memref<32768xf32>
  return
}
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// A collective between two split ops: exp's row tiles (one per core) feed an
// all_reduce, whose result tanh reads back one row tile per core. The
// collective is issued once, whole, by core 0 (a rank is the logical core),
// after a barrier (core 1 wrote half its input); core 1 reads its result
// after a second one.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0,
// CHECK-NEXT: nisa.peer_signal {semaphore = 21 : i64}
// CHECK-NEXT: nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
// CHECK-NEXT: nisa.collective {{.*}} all_reduce sum group 2 id 0 span chip
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <0,
// CHECK-NEXT: nisa.activation tanh
// CHECK-NEXT: nisa.dma_copy %arg1 <0,
// CHECK-NEXT: nisa.peer_signal {semaphore = 21 : i64}
// CHECK-NEXT: nisa.peer_wait {count = 2 : i64, semaphore = 21 : i64}
// CHECK-NEXT: return
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.collective
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <65536,
// CHECK-NEXT: nisa.peer_signal {semaphore = 21 : i64}
// CHECK-NEXT: nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
// CHECK-NEXT: nisa.peer_signal {semaphore = 21 : i64}
// CHECK-NEXT: nisa.peer_wait {count = 2 : i64, semaphore = 21 : i64}
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <65536,
// CHECK-NEXT: nisa.activation tanh
// CHECK-NEXT: nisa.dma_copy %arg1 <65536,
// CHECK-NEXT: return
module {
func.func @main(%in: memref<131072xf32> {nisa.input = 0 : i64},
                %out: memref<131072xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<131072xf32>
  %r = nisa.dram_alloc : memref<131072xf32>
  %a0 = nisa.alloc : !t
  %b0 = nisa.alloc : !t
  %a1 = nisa.alloc : !t
  %b1 = nisa.alloc : !t
  %c0 = nisa.alloc : !t
  %d0 = nisa.alloc : !t
  %c1 = nisa.alloc : !t
  %d1 = nisa.alloc : !t
  nisa.dma_copy %a0 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %b0 <0, [512, 1], [128, 512]>, %a0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %a1 <0, [512, 1], [128, 512]>, %in <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %b1 <0, [512, 1], [128, 512]>, %a1 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <65536, [512, 1], [128, 512]>, %b1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.collective %r <0, [131072, 1], [1, 131072]>, %s <0, [131072, 1], [1, 131072]>
      all_reduce sum group 2 id 0 span chip : memref<131072xf32>, memref<131072xf32>
  nisa.dma_copy %c0 <0, [512, 1], [128, 512]>, %r <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation tanh %d0 <0, [512, 1], [128, 512]>, %c0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %d0 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %c1 <0, [512, 1], [128, 512]>, %r <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation tanh %d1 <0, [512, 1], [128, 512]>, %c1 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <65536, [512, 1], [128, 512]>, %d1 <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  return
}
}

// -----

// Sums over rows as tile^T @ ones (ColumnSums.h): each block of 128 columns
// is one matmul per row tile into its own PSUM column, which cannot be
// halved (its moving operand is one column). The copy out and the store of
// the sums are cut by blocks; each block's matmuls write one half only, so
// they go whole to that half's core (block 1's to core 1), with the
// columns of the row tiles they read.
// CHECK-LABEL: module attributes {trnc.lnc = 2 : i64}
// CHECK: func.func @main(
// CHECK-COUNT-2: nisa.matmul %{{[0-9]+}} <0, [2, 1], [128, 1]>
// CHECK-NOT: nisa.matmul
// CHECK: nisa.tensor_copy %{{[0-9]+}} <0, [2, 1], [128, 1]>
// CHECK: nisa.dma_copy %arg1 <0, [1, 128], [128, 1]>
// CHECK: func.func @main_core1(
// CHECK-NOT: nisa.matmul %{{[0-9]+}} <0,
// CHECK-COUNT-2: nisa.matmul %{{[0-9]+}} <1, [2, 1], [128, 1]>
// CHECK: nisa.tensor_copy %{{[0-9]+}} <1, [2, 1], [128, 1]>
// CHECK: nisa.dma_copy %arg1 <128, [1, 128], [128, 1]>
// CHECK-NEXT: return
module {
func.func @main(%x: memref<65536xf32> {nisa.input = 0 : i64}, %out: memref<256xf32> {nisa.output = 0 : i64}) {
  %ones = nisa.alloc : !nisa.tile<sbuf, 128, 1, f32>
  nisa.memset %ones <0, [1, 1], [128, 1]>, 1.0 on gpsimd : !nisa.tile<sbuf, 128, 1, f32>
  %acc = nisa.alloc : !nisa.tile<psum, 128, 2, f32>
  %t0 = nisa.alloc : !nisa.tile<sbuf, 128, 256, f32>
  nisa.dma_copy %t0 <0, [256, 1], [128, 256]>, %x <0, [256, 1], [128, 256]> : !nisa.tile<sbuf, 128, 256, f32>, memref<65536xf32>
  nisa.matmul %acc <0, [2, 1], [128, 1]>, %t0 <0, [256, 1], [128, 128]>, %ones <0, [1, 1], [128, 1]> : <psum, 128, 2, f32>, <sbuf, 128, 256, f32>, <sbuf, 128, 1, f32>
  nisa.matmul %acc <1, [2, 1], [128, 1]>, %t0 <128, [256, 1], [128, 128]>, %ones <0, [1, 1], [128, 1]> : <psum, 128, 2, f32>, <sbuf, 128, 256, f32>, <sbuf, 128, 1, f32>
  %t1 = nisa.alloc : !nisa.tile<sbuf, 128, 256, f32>
  nisa.dma_copy %t1 <0, [256, 1], [128, 256]>, %x <32768, [256, 1], [128, 256]> : !nisa.tile<sbuf, 128, 256, f32>, memref<65536xf32>
  nisa.matmul %acc <0, [2, 1], [128, 1]>, %t1 <0, [256, 1], [128, 128]>, %ones <0, [1, 1], [128, 1]> accumulate : <psum, 128, 2, f32>, <sbuf, 128, 256, f32>, <sbuf, 128, 1, f32>
  nisa.matmul %acc <1, [2, 1], [128, 1]>, %t1 <128, [256, 1], [128, 128]>, %ones <0, [1, 1], [128, 1]> accumulate : <psum, 128, 2, f32>, <sbuf, 128, 256, f32>, <sbuf, 128, 1, f32>
  %o = nisa.alloc : !nisa.tile<sbuf, 128, 2, f32>
  nisa.tensor_copy %o <0, [2, 1], [128, 2]>, %acc <0, [2, 1], [128, 2]> on scalar : !nisa.tile<sbuf, 128, 2, f32>, !nisa.tile<psum, 128, 2, f32>
  nisa.dma_copy %out <0, [1, 128], [128, 2]>, %o <0, [2, 1], [128, 2]> : memref<256xf32>, !nisa.tile<sbuf, 128, 2, f32>
  return
}
}
