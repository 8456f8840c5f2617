// RUN: trnc-opt %s -split-input-file --trnc-fuse-tile-loops | FileCheck %s
// RUN: trnc-opt %s -split-input-file --trnc-fuse-tile-loops | trnc-opt -split-input-file > /dev/null
// Fused, unrolled and forwarded, the consumer's loads of the producer's
// tiles are gone, even when little SBUF may hold forwarded tiles (2% of a
// partition: unfused, the three stored tiles would all wait for the
// consumer's loop, and none is forwarded):
// RUN: trnc-opt %s -split-input-file --trnc-fuse-tile-loops --trnc-unroll-tile-loops --trnc-fuse-forward-stores=memory-share=0.02 | FileCheck %s --check-prefix=FWD
// With all of SBUF allowed, the loops whose tiles exceed the default share
// (75%) are fused too:
// RUN: trnc-opt %s -split-input-file --trnc-fuse-tile-loops=memory-share=1.0 | FileCheck %s --check-prefix=ALL
// The lowering's loops, fused: a layer norm's rows into the matmul reading
// them, at the end of this file.

// A producer (exp of x into y, row tiles 1..3) and its consumer (y * 2 into
// z, the same tiles), the consumer's first tile and a resident tile between
// them: one loop, the producer's body then the consumer's, the ops between
// moved above it.
// CHECK-LABEL: func.func @producer_consumer
// CHECK: %[[W:[0-9]+]] = nisa.alloc : <sbuf, 128, 1, f32>
// CHECK: nisa.dma_copy %[[W]] {{.*}}, %arg3
// CHECK: nisa.dma_copy {{.*}}, %arg1 <0, [512, 1], [128, 512]>
// CHECK: scf.for
// CHECK: nisa.activation exp
// CHECK: nisa.dma_copy %{{[0-9]+}} <65536, [512, 1], [128, 512]>
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <65536, [512, 1], [128, 512]>
// CHECK: nisa.tensor_scalar {{.*}} per_partition %[[W]]
// CHECK: }
// CHECK-NOT: scf.for
// FWD-LABEL: func.func @producer_consumer
// FWD-NOT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg1 <{{[1-9]}}
// FWD: return
func.func @producer_consumer(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>, %w: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <65536, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    %e = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.activation exp %e <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %yi <65536, [512, 1], [128, 512]>, %e <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  %w0 = nisa.alloc : !nisa.tile<sbuf, 128, 1, f32>
  nisa.dma_copy %w0 <0, [1, 1], [128, 1]>, %w <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 1, f32>, memref<128xf32>
  %r0 = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %r0 <0, [512, 1], [128, 512]>, %y <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <65536, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    %m = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.tensor_scalar %m <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> multiply 0.0 per_partition %w0 <0, [1, 1], [128, 1]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 1, f32>
    nisa.dma_copy %zi <65536, [512, 1], [128, 512]>, %m <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// Iteration i of the consumer reads the tile iteration i + 1 of the
// producer writes: fused, it would read it before it is written.
// CHECK-LABEL: func.func @reads_ahead
// CHECK-COUNT-2: scf.for
func.func @reads_ahead(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  scf.for %i = %c0 to %c3 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <65536, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %zi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// An instruction between the loops reads what the producer loop writes
// (its last tile): it cannot move above the producer, nor below the fused
// loop (the consumer reads the tile it loads), so nothing fuses.
// CHECK-LABEL: func.func @between_reads_producer
// CHECK-COUNT-2: scf.for
func.func @between_reads_producer(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  %r = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %r <0, [512, 1], [128, 512]>, %y <131072, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.tensor_tensor add %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %r <0, [512, 1], [128, 512]> on vector : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %zi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// Different trip counts (the consumer walks half-size tiles) do not fuse.
// CHECK-LABEL: func.func @trip_counts_differ
// CHECK-COUNT-2: scf.for
func.func @trip_counts_differ(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %yi = nisa.hbm_window %y[%i * 32768] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 32768] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 64, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [64, 512]>, %yi <0, [512, 1], [64, 512]> : !nisa.tile<sbuf, 64, 512, f32>, memref<262144xf32>
    nisa.dma_copy %zi <0, [512, 1], [64, 512]>, %t <0, [512, 1], [64, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 64, 512, f32>
  }
  return
}

// -----

// The producer sums its tiles into one PSUM tile across iterations (a sum
// over rows) that the consumer reads in every iteration: iteration 0 of the
// consumer would read a partial sum.
// CHECK-LABEL: func.func @shared_accumulator
// CHECK-COUNT-2: scf.for
func.func @shared_accumulator(%x: memref<262144xf32>, %z: memref<262144xf32>, %ones: !nisa.tile<sbuf, 128, 128, f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %acc = nisa.alloc : !nisa.tile<psum, 128, 512, f32>
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.matmul %acc <0, [512, 1], [128, 512]>, %ones <0, [128, 1], [128, 128]>, %t <0, [512, 1], [128, 512]> accumulate : !nisa.tile<psum, 128, 512, f32>, !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.tensor_tensor add %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %acc <0, [512, 1], [128, 512]> on vector : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<psum, 128, 512, f32>
    nisa.dma_copy %zi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// A software-pipelined consumer (each iteration stores the tile the
// previous one computed) and a chain of three loops: one loop carrying the
// consumer's tile, its result the last iteration's.
// CHECK-LABEL: func.func @chain_carried
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %{{[0-9]+}}) -> (!nisa.tile<sbuf, 128, 512, f32>)
// CHECK: nisa.activation exp
// CHECK: nisa.activation tanh
// CHECK: nisa.activation sigmoid
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK: nisa.dma_copy %arg3 <262144, [512, 1], [128, 512]>, %[[R]] <
func.func @chain_carried(%x: memref<262144xf32>, %y: memref<262144xf32>, %u: memref<262144xf32>, %z: memref<327680xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.activation exp %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %ui = nisa.hbm_window %u[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.activation tanh %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %ui <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  %first = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.memset %first <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<sbuf, 128, 512, f32>
  %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%prev = %first) -> (!nisa.tile<sbuf, 128, 512, f32>) {
    %ui = nisa.hbm_window %u[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<327680xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %ui <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.activation sigmoid %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %zi <0, [512, 1], [128, 512]>, %prev <0, [512, 1], [128, 512]> : memref<327680xf32>, !nisa.tile<sbuf, 128, 512, f32>
    scf.yield %t : !nisa.tile<sbuf, 128, 512, f32>
  }
  nisa.dma_copy %z <262144, [512, 1], [128, 512]>, %last <0, [512, 1], [128, 512]> : memref<327680xf32>, !nisa.tile<sbuf, 128, 512, f32>
  return
}

// -----

// Between the loops, a copy of the producer's last tile into %v (a row
// group's weight sums stored after its loop) and a copy of %w into %u.
// The first cannot move above the producer; the consumer neither reads
// what it writes nor uses its tile, so it goes below the fused loop, with
// the store that uses its tile. The second goes above.
// CHECK-LABEL: func.func @between_goes_below
// CHECK: nisa.dma_copy %[[U:[0-9]+]] {{.*}}, %arg3
// CHECK-NEXT: nisa.dma_copy %arg4 {{.*}}, %[[U]]
// CHECK: scf.for
// CHECK: nisa.activation exp
// CHECK: nisa.tensor_tensor add
// CHECK: }
// CHECK-NEXT: nisa.dma_copy %[[L:[0-9]+]] {{.*}}, %arg1 <131072, [512, 1], [128, 512]>
// CHECK-NEXT: nisa.dma_copy %arg5 {{.*}}, %[[L]]
// CHECK-NOT: scf.for
func.func @between_goes_below(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>, %w: memref<65536xf32>, %u: memref<65536xf32>, %v: memref<65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    %e = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.activation exp %e <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %e <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  %l = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %l <0, [512, 1], [128, 512]>, %y <131072, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
  %m = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %m <0, [512, 1], [128, 512]>, %w <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<65536xf32>
  nisa.dma_copy %u <0, [512, 1], [128, 512]>, %m <0, [512, 1], [128, 512]> : memref<65536xf32>, !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %v <0, [512, 1], [128, 512]>, %l <0, [512, 1], [128, 512]> : memref<65536xf32>, !nisa.tile<sbuf, 128, 512, f32>
  scf.for %i = %c0 to %c3 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.tensor_tensor add %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> on vector : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %zi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// The copy of the producer's last tile goes into z, which the consumer
// writes: it can go neither above the producer nor below the consumer's
// stores, so nothing fuses.
// CHECK-LABEL: func.func @below_would_reorder_consumer
// CHECK-COUNT-2: scf.for
func.func @below_would_reorder_consumer(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  %l = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %l <0, [512, 1], [128, 512]>, %y <131072, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
  nisa.dma_copy %z <0, [512, 1], [128, 512]>, %l <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  scf.for %i = %c0 to %c3 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %zi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// The consumer starts from the tile the producer's loop leaves (its
// result, an SSA value, not a tile in HBM): the fused loop would not have
// it yet.
// CHECK-LABEL: func.func @uses_producer_result
// CHECK-COUNT-2: scf.for
func.func @uses_producer_result(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %first = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.memset %first <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<sbuf, 128, 512, f32>
  %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%prev = %first) -> (!nisa.tile<sbuf, 128, 512, f32>) {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
    scf.yield %t : !nisa.tile<sbuf, 128, 512, f32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.tensor_tensor add %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %last <0, [512, 1], [128, 512]> on vector : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %zi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// The producer has one iteration more than the consumer (its loop covers
// tiles 0..3, the consumer's 1..3, the consumer's first tile computed
// between them from tile 0): the producer runs one iteration ahead. Its
// first iteration runs before, then the instruction between (which reads
// tile 0), then one loop of the producer's iteration k + 1 (its windows
// moved one step on) and the consumer's k.
// CHECK-LABEL: func.func @producer_ahead
// CHECK: %[[H:[0-9]+]] = nisa.hbm_window %arg1[%{{.*}} * 65536]
// CHECK: nisa.dma_copy %[[H]] <0, [512, 1], [128, 512]>
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg1 <0, [512, 1], [128, 512]>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3
// CHECK: nisa.dma_copy %{{[0-9]+}} <65536, [512, 1], [128, 512]>, %{{[0-9]+}} <0, [512, 1], [128, 512]>
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <65536, [512, 1], [128, 512]>
// CHECK-NOT: scf.for
// FWD-LABEL: func.func @producer_ahead
// FWD-NOT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg1 <{{[1-9]}}
// FWD: return
func.func @producer_ahead(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  %r0 = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %r0 <0, [512, 1], [128, 512]>, %y <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
  nisa.dma_copy %z <0, [512, 1], [128, 512]>, %r0 <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  scf.for %i = %c0 to %c3 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <65536, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %zi <65536, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// @producer_ahead with a periodic window in the producer (x plus a table
// of two tiles broadcast over the batch, the table's window returning to
// its start every second iteration). Running one iteration ahead, the
// window starts one iteration into its period (phase 1) and its access
// moves one step on: the fused loop's iteration k still reads the table's
// tile (k + 1) mod 2. A periodic window counts as its whole buffer in every
// iteration (the table is only read here, so no hazard).
// CHECK-LABEL: func.func @periodic_producer_ahead
// CHECK: nisa.hbm_window %arg3[%{{.*}} * 65536 period 2]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3
// CHECK: %[[P:[0-9]+]] = nisa.hbm_window %arg3[%{{.*}} * 65536 period 2 phase 1]
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %[[P]] <65536, [512, 1], [128, 512]>
// CHECK-NOT: scf.for
// Unrolled: the table's tiles 0, then 1, 0, 1.
// FWD-LABEL: func.func @periodic_producer_ahead
// FWD: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg3 <0, [512, 1], [128, 512]>
// FWD: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg3 <65536, [512, 1], [128, 512]>
// FWD: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg3 <0, [512, 1], [128, 512]>
// FWD: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg3 <65536, [512, 1], [128, 512]>
// FWD-NOT: %arg3 <
func.func @periodic_producer_ahead(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>, %p: memref<131072xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %pi = nisa.hbm_window %p[%i * 65536 period 2] : memref<131072xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    %u = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %u <0, [512, 1], [128, 512]>, %pi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<131072xf32>
    nisa.tensor_tensor add %t <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %u <0, [512, 1], [128, 512]> on vector : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  %r0 = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %r0 <0, [512, 1], [128, 512]>, %y <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
  nisa.dma_copy %z <0, [512, 1], [128, 512]>, %r0 <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  scf.for %i = %c0 to %c3 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <65536, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    nisa.dma_copy %zi <65536, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}

// -----

// The producer has three iterations more than the consumer, beyond
// max-shift (2): not fused (it would run most of its loop before the fused
// one).
// CHECK-LABEL: func.func @too_far_ahead
// CHECK-COUNT-2: scf.for
func.func @too_far_ahead(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 64, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [64, 512]>, %xi <0, [512, 1], [64, 512]> : !nisa.tile<sbuf, 64, 512, f32>, memref<262144xf32>
    nisa.dma_copy %yi <0, [512, 1], [64, 512]>, %t <0, [512, 1], [64, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 64, 512, f32>
  }
  scf.for %i = %c0 to %c1 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 64, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [64, 512]>, %yi <0, [512, 1], [64, 512]> : !nisa.tile<sbuf, 64, 512, f32>, memref<262144xf32>
    nisa.dma_copy %zi <0, [512, 1], [64, 512]>, %t <0, [512, 1], [64, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 64, 512, f32>
  }
  return
}

// -----

// Each loop adds a resident tile of 100 KiB per partition (a weight block
// held through the loop) to its rows: fused, the loop would hold both, over
// 75% of a trn2 partition (224 KiB), which the list scheduler could not
// place beside the iteration's tiles. Not fused; with memory-share=1.0 it is.
// CHECK-LABEL: func.func @too_big_to_fuse
// CHECK: scf.for
// CHECK: scf.for
// ALL-LABEL: func.func @too_big_to_fuse
// ALL: scf.for
// ALL-NOT: scf.for
func.func @too_big_to_fuse(%x: memref<262144xf32>, %y: memref<262144xf32>, %z: memref<262144xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 25600, f32>
  scf.for %i = %c0 to %c4 step %c1 {
    %xi = nisa.hbm_window %x[%i * 65536] : memref<262144xf32>
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %xi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    %s = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.tensor_tensor add %s <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %a <0, [25600, 1], [128, 512]> on vector : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 25600, f32>
    nisa.dma_copy %yi <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 25600, f32>
  scf.for %i = %c0 to %c4 step %c1 {
    %yi = nisa.hbm_window %y[%i * 65536] : memref<262144xf32>
    %zi = nisa.hbm_window %z[%i * 65536] : memref<262144xf32>
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %yi <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<262144xf32>
    %s = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
    nisa.tensor_tensor add %s <0, [512, 1], [128, 512]>, %t <0, [512, 1], [128, 512]>, %b <0, [25600, 1], [128, 512]> on vector : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 25600, f32>
    nisa.dma_copy %zi <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : memref<262144xf32>, !nisa.tile<sbuf, 128, 512, f32>
  }
  return
}
