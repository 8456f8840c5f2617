// RUN: trnc-opt %s -split-input-file -trnc-pipeline-split-logical-cores -verify-diagnostics | FileCheck %s

!t = !nisa.tile<sbuf, 128, 512, f32>

// An elementwise chain, exp then tanh through scratch, over two row tiles:
// each core computes one row tile of both ops and reads back only the rows
// it wrote, so there is no barrier.
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
