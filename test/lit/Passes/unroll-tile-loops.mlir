// RUN: trnc-opt %s -split-input-file --trnc-unroll-tile-loops | FileCheck %s
// RUN: trnc-opt %s -split-input-file --trnc-unroll-tile-loops | trnc-opt -split-input-file > /dev/null
// A one-trip window (a loop canonicalize inlined) folds to its buffer.
// RUN: trnc-opt %s -split-input-file -canonicalize | FileCheck %s --check-prefix=FOLD
// The lowering's own loops, unrolled: lower-to-nisa-elementwise.mlir.

// A nest of two loops, windows of windows: each instruction's pattern is
// iteration 0's moved by i * 2048 + j * 512 elements; every iteration has
// its own tiles; nothing of the loops is left.
// CHECK-LABEL: func.func @nest
// CHECK-NOT: scf.for
// CHECK-NOT: hbm_window
// CHECK-NOT: arith.constant
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [1, 1], [128, 4]>
// CHECK: nisa.dma_copy %arg1 <0, [1, 1], [128, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <512, [1, 1], [128, 4]>
// CHECK: nisa.dma_copy %arg1 <512, [1, 1], [128, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <2048, [1, 1], [128, 4]>
// CHECK: nisa.dma_copy %arg1 <2048, [1, 1], [128, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <2560, [1, 1], [128, 4]>
// CHECK: nisa.dma_copy %arg1 <2560, [1, 1], [128, 4]>
// CHECK-NOT: nisa.dma_copy
func.func @nest(%x: memref<4096xf32>, %y: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %xi = nisa.hbm_window %x[%i * 2048] : memref<4096xf32>
    %yi = nisa.hbm_window %y[%i * 2048] : memref<4096xf32>
    scf.for %j = %c0 to %c2 step %c1 {
      %xj = nisa.hbm_window %xi[%j * 512] : memref<4096xf32>
      %yj = nisa.hbm_window %yi[%j * 512] : memref<4096xf32>
      %t = nisa.alloc : !nisa.tile<sbuf, 128, 4, f32>
      nisa.dma_copy %t <0, [4, 1], [128, 4]>, %xj <0, [1, 1], [128, 4]> : !nisa.tile<sbuf, 128, 4, f32>, memref<4096xf32>
      nisa.dma_copy %yj <0, [1, 1], [128, 4]>, %t <0, [4, 1], [128, 4]> : memref<4096xf32>, !nisa.tile<sbuf, 128, 4, f32>
    }
  }
  return
}

// -----

// Four iterations of a multiply that Vector, Scalar and GpSimd can all run,
// marked as a fusion group's (trnc.engine_group) and free to move
// (trnc.engine_free): the body says Vector; unrolled, consecutive iterations
// go to whichever engine would end first, so not all stay on Vector. The
// marks are gone afterwards.
// CHECK-LABEL: func.func @engines
// CHECK-NOT: trnc.engine
// CHECK: nisa.tensor_scalar {{.*}} on scalar
// CHECK: nisa.tensor_scalar {{.*}} on gpsimd
// CHECK: nisa.tensor_scalar {{.*}} on vector
// CHECK: nisa.tensor_scalar {{.*}} on scalar
// CHECK-NOT: trnc.engine
func.func @engines(%x: memref<8192xf32>, %y: memref<8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 2048] : memref<8192xf32>
    %yi = nisa.hbm_window %y[%i * 2048] : memref<8192xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 16, f32>
    nisa.dma_copy %t <0, [16, 1], [128, 16]>, %xi <0, [16, 1], [128, 16]> {trnc.engine_group = 0 : i64} : !nisa.tile<sbuf, 128, 16, f32>, memref<8192xf32>
    %u = nisa.alloc : !nisa.tile<sbuf, 128, 16, f32>
    nisa.tensor_scalar %u <0, [16, 1], [128, 16]>, %t <0, [16, 1], [128, 16]> multiply 2.0, bypass 0.0 on vector {trnc.engine_group = 0 : i64, trnc.engine_free} : !nisa.tile<sbuf, 128, 16, f32>, !nisa.tile<sbuf, 128, 16, f32>
    nisa.dma_copy %yi <0, [16, 1], [128, 16]>, %u <0, [16, 1], [128, 16]> {trnc.engine_group = 0 : i64} : memref<8192xf32>, !nisa.tile<sbuf, 128, 16, f32>
  }
  return
}

// -----

// The same kind of chain, each iteration's last instruction marked
// trnc.engine_barrier (a row group's task whose tiles do not fit SBUF beside
// the next one's, so they never overlap): each iteration is placed from
// idle engines, where Vector ends first; without the mark the second
// iteration would go to GpSimd and Scalar, to overlap the first.
// CHECK-LABEL: func.func @serial
// CHECK-NOT: on gpsimd
// CHECK-NOT: on scalar
// CHECK: return
func.func @serial(%x: memref<65536xf32>, %y: memref<65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 16384] : memref<65536xf32>
    %yi = nisa.hbm_window %y[%i * 16384] : memref<65536xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 128, f32>
    nisa.dma_copy %t <0, [128, 1], [128, 128]>, %xi <0, [128, 1], [128, 128]> {trnc.engine_group = 3 : i64, trnc.engine_free} : !nisa.tile<sbuf, 128, 128, f32>, memref<65536xf32>
    %u = nisa.alloc : !nisa.tile<sbuf, 128, 128, f32>
    nisa.tensor_tensor add %u <0, [128, 1], [128, 128]>, %t <0, [128, 1], [128, 128]>, %t <0, [128, 1], [128, 128]> on vector {trnc.engine_group = 3 : i64, trnc.engine_free} : !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 128, f32>
    %v = nisa.alloc : !nisa.tile<sbuf, 128, 128, f32>
    nisa.tensor_scalar %v <0, [128, 1], [128, 128]>, %u <0, [128, 1], [128, 128]> multiply 2.0, bypass 0.0 on vector {trnc.engine_group = 3 : i64, trnc.engine_free} : !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 128, f32>
    nisa.dma_copy %yi <0, [128, 1], [128, 128]>, %v <0, [128, 1], [128, 128]> {trnc.engine_group = 3 : i64, trnc.engine_free, trnc.engine_barrier} : memref<65536xf32>, !nisa.tile<sbuf, 128, 128, f32>
  }
  return
}

// -----

// Marks outside any loop (a group's tiles emitted one by one) are placed
// the same way. The add, not marked free (a lowering's own choice), stays on
// Vector although Vector is busy with the first multiply (marked free, it
// would move); the second multiply goes to Scalar.
// CHECK-LABEL: func.func @straight_line
// CHECK: nisa.tensor_scalar {{.*}} multiply 2.000000e+00, {{.*}} on vector
// CHECK: nisa.tensor_tensor add {{.*}} on vector
// CHECK: nisa.tensor_scalar {{.*}} multiply 3.000000e+00, {{.*}} on scalar
// CHECK-NOT: trnc.engine
func.func @straight_line(%t: !nisa.tile<sbuf, 128, 128, f32>, %u: !nisa.tile<sbuf, 128, 128, f32>, %v: !nisa.tile<sbuf, 128, 128, f32>, %w: !nisa.tile<sbuf, 128, 128, f32>) {
  nisa.tensor_scalar %v <0, [128, 1], [128, 128]>, %t <0, [128, 1], [128, 128]> multiply 2.0, bypass 0.0 on vector {trnc.engine_group = 1 : i64, trnc.engine_free} : !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 128, f32>
  nisa.tensor_tensor add %u <0, [128, 1], [128, 128]>, %t <0, [128, 1], [128, 128]>, %t <0, [128, 1], [128, 128]> on vector {trnc.engine_group = 1 : i64} : !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 128, f32>
  nisa.tensor_scalar %w <0, [128, 1], [128, 128]>, %t <0, [128, 1], [128, 128]> multiply 3.0, bypass 0.0 on vector {trnc.engine_group = 1 : i64, trnc.engine_free} : !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 128, f32>
  return
}

// -----

// PSUM copies that take turns on Scalar and Vector (trnc.engine_alternate,
// the value a stream: one matmul's or attention's copies). A body emitted
// once holds one copy of stream 0, so every iteration would repeat its
// engine; unrolled, stream 0 alternates across the copy before the loop
// and the three iterations, and stream 1, interleaved, starts on Scalar of
// its own. The marks are gone afterwards.
// CHECK-LABEL: func.func @alternating_copies
// CHECK-NOT: trnc.engine
// CHECK: nisa.tensor_copy %arg1 {{.*}} on scalar
// CHECK: nisa.tensor_copy %arg1 {{.*}} on vector
// CHECK: nisa.tensor_copy %arg2 {{.*}} on scalar
// CHECK: nisa.tensor_copy %arg1 {{.*}} on scalar
// CHECK: nisa.tensor_copy %arg2 {{.*}} on vector
// CHECK: nisa.tensor_copy %arg1 {{.*}} on vector
// CHECK: nisa.tensor_copy %arg2 {{.*}} on scalar
// CHECK-NOT: trnc.engine
func.func @alternating_copies(%p: !nisa.tile<psum, 128, 512, f32>, %s: !nisa.tile<sbuf, 128, 512, f32>, %t: !nisa.tile<sbuf, 128, 512, f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  nisa.tensor_copy %s <0, [512, 1], [128, 512]>, %p <0, [512, 1], [128, 512]> on scalar {trnc.engine_alternate = 0 : i64} : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<psum, 128, 512, f32>
  scf.for %i = %c0 to %c3 step %c1 {
    nisa.tensor_copy %s <0, [512, 1], [128, 512]>, %p <0, [512, 1], [128, 512]> on scalar {trnc.engine_alternate = 0 : i64} : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<psum, 128, 512, f32>
    nisa.tensor_copy %t <0, [512, 1], [128, 512]>, %p <0, [512, 1], [128, 512]> on scalar {trnc.engine_alternate = 1 : i64} : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<psum, 128, 512, f32>
  }
  return
}

// -----

// FOLD-LABEL: func.func @one_trip
// FOLD-NOT: hbm_window
// FOLD: nisa.dma_copy %{{.*}}, %arg0 <16, [1, 1], [128, 4]>
func.func @one_trip(%x: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %w = nisa.hbm_window %x[%c0 * 2048] : memref<4096xf32>
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 4, f32>
  nisa.dma_copy %t <0, [4, 1], [128, 4]>, %w <16, [1, 1], [128, 4]> : !nisa.tile<sbuf, 128, 4, f32>, memref<4096xf32>
  return
}

// -----

// A periodic window (a table broadcast over the batch): iteration i reads
// ((i + 1) mod 3 - 1) * 64 elements on, here 64, 128, 0, 64 and 128 from
// the pattern's offset 64. A constant index whose window does not move
// its source folds away (FOLD).
// CHECK-LABEL: func.func @periodic
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <64, [4, 1], [16, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <128, [4, 1], [16, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [4, 1], [16, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <64, [4, 1], [16, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <128, [4, 1], [16, 4]>
// Outside the loop: at 2, -64 elements (0); at 3, none (64).
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <0, [4, 1], [16, 4]>
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <64, [4, 1], [16, 4]>
// CHECK-NOT: nisa.dma_copy
// FOLD-LABEL: func.func @periodic
// FOLD: %[[W:[0-9]+]] = nisa.hbm_window %arg0[%c2 * 64 period 3 phase 1]
// FOLD: nisa.dma_copy %{{.*}}, %[[W]]
// FOLD: nisa.dma_copy %{{.*}}, %arg0 <64, [4, 1], [16, 4]>
func.func @periodic(%x: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %w = nisa.hbm_window %x[%i * 64 period 3 phase 1] : memref<256xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 16, 4, f32>
    nisa.dma_copy %t <0, [4, 1], [16, 4]>, %w <64, [4, 1], [16, 4]> : !nisa.tile<sbuf, 16, 4, f32>, memref<256xf32>
  }
  %moved = nisa.hbm_window %x[%c2 * 64 period 3 phase 1] : memref<256xf32>
  %still = nisa.hbm_window %x[%c3 * 64 period 3 phase 1] : memref<256xf32>
  %t1 = nisa.alloc : !nisa.tile<sbuf, 16, 4, f32>
  nisa.dma_copy %t1 <0, [4, 1], [16, 4]>, %moved <64, [4, 1], [16, 4]> : !nisa.tile<sbuf, 16, 4, f32>, memref<256xf32>
  nisa.dma_copy %t1 <0, [4, 1], [16, 4]>, %still <64, [4, 1], [16, 4]> : !nisa.tile<sbuf, 16, 4, f32>, memref<256xf32>
  return
}

// -----

// A loop whose instructions carry no marks (a matmul's) keeps the engines
// its body names, and carries a tile to the next iteration: each iteration
// stores the tile the previous one computed (iter_args), the loop's result
// is the last iteration's tile, stored after it.
// CHECK-LABEL: func.func @carried
// CHECK: %[[T0:[0-9]+]] = nisa.alloc
// CHECK: nisa.tensor_scalar %[[T0]] {{.*}} on vector
// CHECK: %[[T1:[0-9]+]] = nisa.alloc
// CHECK: nisa.tensor_scalar %[[T1]] {{.*}} on vector
// CHECK: nisa.dma_copy %arg1 <0, [16, 1], [128, 16]>, %[[T0]]
// CHECK: %[[T2:[0-9]+]] = nisa.alloc
// CHECK: nisa.tensor_scalar %[[T2]] {{.*}} on vector
// CHECK: nisa.dma_copy %arg1 <2048, [16, 1], [128, 16]>, %[[T1]]
// CHECK: nisa.dma_copy %arg1 <4096, [16, 1], [128, 16]>, %[[T2]]
// CHECK-NOT: nisa.dma_copy
func.func @carried(%x: memref<8192xf32>, %y: memref<8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t0 = nisa.alloc : !nisa.tile<sbuf, 128, 16, f32>
  nisa.tensor_scalar %t0 <0, [16, 1], [128, 16]>, %t0 <0, [16, 1], [128, 16]> multiply 2.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 16, f32>, !nisa.tile<sbuf, 128, 16, f32>
  %last = scf.for %i = %c0 to %c2 step %c1 iter_args(%prev = %t0) -> (!nisa.tile<sbuf, 128, 16, f32>) {
    %yi = nisa.hbm_window %y[%i * 2048] : memref<8192xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 16, f32>
    nisa.tensor_scalar %t <0, [16, 1], [128, 16]>, %t <0, [16, 1], [128, 16]> multiply 2.0, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 16, f32>, !nisa.tile<sbuf, 128, 16, f32>
    nisa.dma_copy %yi <0, [16, 1], [128, 16]>, %prev <0, [16, 1], [128, 16]> : memref<8192xf32>, !nisa.tile<sbuf, 128, 16, f32>
    scf.yield %t : !nisa.tile<sbuf, 128, 16, f32>
  }
  nisa.dma_copy %y <4096, [16, 1], [128, 16]>, %last <0, [16, 1], [128, 16]> : memref<8192xf32>, !nisa.tile<sbuf, 128, 16, f32>
  return
}
