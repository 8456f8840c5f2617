// RUN: trnc-opt %s -split-input-file -trnc-fuse-forward-stores | FileCheck %s
// RUN: trnc-opt %s -split-input-file -trnc-fuse-forward-stores="memory-share=0.01" | FileCheck %s --check-prefix=TIGHT

!t = !nisa.tile<sbuf, 128, 512, f32>

// exp's tile goes straight to tanh: the load is forwarded, the store into
// scratch is dead, and so is the scratch. With too little memory to keep
// exp's tile alive until tanh, nothing changes.
// CHECK-LABEL: func.func @chain
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.activation exp %[[U:[0-9]+]]
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %arg0
// CHECK-NEXT: nisa.activation tanh %{{[0-9]+}} <0, [512, 1], [128, 512]>, %[[U]]
// CHECK-NEXT: nisa.dma_copy %arg1
// CHECK-NEXT: return
// TIGHT-LABEL: func.func @chain
// TIGHT: nisa.dram_alloc
// TIGHT-COUNT-4: nisa.dma_copy
func.func @chain(%in: memref<65536xf32> {nisa.input = 0 : i64},
                 %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<65536xf32>
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  %c = nisa.alloc : !t
  %d = nisa.alloc : !t
  %e = nisa.alloc : !t
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  // Unrelated work between the store and the load.
  nisa.dma_copy %e <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.activation tanh %d <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %d <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  return
}

// -----

// A store that rounds (f32 tile into bf16 HBM) is not forwarded: the load
// must see the rounded values.
// CHECK-LABEL: func.func @rounding_store
// CHECK: nisa.dram_alloc
// CHECK-COUNT-3: nisa.dma_copy
func.func @rounding_store(%in: memref<65536xf32> {nisa.input = 0 : i64},
                          %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<65536xbf16>
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  %c = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<65536xbf16>, !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<65536xbf16>
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : memref<65536xf32>, !nisa.tile<sbuf, 128, 512, f32>
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// The stored tile is overwritten before the load (its buffer is reused), and
// a second store to the same bytes lands between the first store and the
// load: neither load may be forwarded from the first store.
// CHECK-LABEL: func.func @clobbered
// CHECK: nisa.dram_alloc
// CHECK-COUNT-6: nisa.dma_copy
func.func @clobbered(%in: memref<65536xf32> {nisa.input = 0 : i64},
                     %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<65536xf32>
  %a = nisa.alloc : !t
  %c = nisa.alloc : !t
  %d = nisa.alloc : !t
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.activation exp %a <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %d <0, [512, 1], [128, 512]>, %s <0, [256, 1], [256, 256]> : !t, memref<65536xf32>
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %d <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// A value materialised in scratch, then copied HBM -> HBM into the output
// (a view returned): the copy stores exp's tile instead, and the scratch
// store and the scratch go. A copy that changes the type (bf16 output) or
// reads another pattern than the store wrote is left alone.
// CHECK-LABEL: func.func @copy_from_stored_tile
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.activation exp %[[U:[0-9]+]]
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [512, 1], [128, 512]>, %[[U]] <0, [512, 1], [128, 512]> : memref<65536xf32>, !nisa.tile
// CHECK-NEXT: return
func.func @copy_from_stored_tile(%in: memref<65536xf32> {nisa.input = 0 : i64},
                                 %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<65536xf32>
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : memref<65536xf32>, memref<65536xf32>
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// CHECK-LABEL: func.func @copy_not_forwarded
// CHECK: nisa.dram_alloc
// CHECK: nisa.dma_copy %arg1 <0, [512, 1], [128, 512]>, %{{[0-9]+}} <0, [512, 1], [128, 512]> : memref<65536xbf16>, memref<65536xf32>
// CHECK: nisa.dma_copy %arg2 <0, [256, 1], [128, 256]>, %{{[0-9]+}} <0, [256, 1], [128, 256]> : memref<32768xf32>, memref<65536xf32>
func.func @copy_not_forwarded(%in: memref<65536xf32> {nisa.input = 0 : i64},
                              %out: memref<65536xbf16> {nisa.output = 0 : i64},
                              %half: memref<32768xf32> {nisa.output = 1 : i64}) {
  %s = nisa.dram_alloc : memref<65536xf32>
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> : memref<65536xbf16>, memref<65536xf32>
  nisa.dma_copy %half <0, [256, 1], [128, 256]>, %s <0, [256, 1], [128, 256]> : memref<32768xf32>, memref<65536xf32>
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// Before unrolling: a fused loop whose iteration stores exp's tile and then
// loads the same bytes back through its own window of the scratch (same
// root, induction variable, step and pattern) hands the tile over in the
// iteration; the scratch, stored by every iteration and read by none now,
// goes with its windows.
// CHECK-LABEL: func.func @in_loop
// CHECK-NOT: nisa.dram_alloc
// CHECK: scf.for
// CHECK: nisa.activation exp %[[U:[0-9]+]]
// CHECK-NOT: nisa.dma_copy
// CHECK: nisa.activation tanh %{{[0-9]+}} <0, [512, 1], [128, 512]>, %[[U]]
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}}
// CHECK-NEXT: }
func.func @in_loop(%in: memref<262144xf32> {nisa.input = 0 : i64},
                   %out: memref<262144xf32> {nisa.output = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = nisa.dram_alloc : memref<262144xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %win = nisa.hbm_window %in[%i * 65536] : memref<262144xf32>
    %ws = nisa.hbm_window %s[%i * 65536] : memref<262144xf32>
    %a = nisa.alloc : !t
    %b = nisa.alloc : !t
    nisa.dma_copy %a <0, [512, 1], [128, 512]>, %win <0, [512, 1], [128, 512]> : !t, memref<262144xf32>
    nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
    nisa.dma_copy %ws <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<262144xf32>, !t
    %ws2 = nisa.hbm_window %s[%i * 65536] : memref<262144xf32>
    %wout = nisa.hbm_window %out[%i * 65536] : memref<262144xf32>
    %c = nisa.alloc : !t
    %d = nisa.alloc : !t
    nisa.dma_copy %c <0, [512, 1], [128, 512]>, %ws2 <0, [512, 1], [128, 512]> : !t, memref<262144xf32>
    nisa.activation tanh %d <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : !t, !t
    nisa.dma_copy %wout <0, [512, 1], [128, 512]>, %d <0, [512, 1], [128, 512]> : memref<262144xf32>, !t
  }
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// Not handed over: a load of another iteration's tile (the window moves
// with the loop, the pattern reads the next tile), and a loop that loads
// what another loop stored (every iteration's tile would have to wait a
// whole loop: trnc-fuse-tile-loops joins such loops first).
// CHECK-LABEL: func.func @other_iteration
// CHECK: nisa.dram_alloc
// CHECK-COUNT-3: nisa.dma_copy
// CHECK-LABEL: func.func @loop_to_loop
// CHECK: nisa.dram_alloc
// CHECK: scf.for
// CHECK-COUNT-2: nisa.dma_copy
// CHECK: scf.for
// CHECK-COUNT-2: nisa.dma_copy
func.func @other_iteration(%in: memref<262144xf32> {nisa.input = 0 : i64},
                           %out: memref<262144xf32> {nisa.output = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s = nisa.dram_alloc : memref<262144xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    %win = nisa.hbm_window %in[%i * 65536] : memref<262144xf32>
    %ws = nisa.hbm_window %s[%i * 65536] : memref<262144xf32>
    %wout = nisa.hbm_window %out[%i * 65536] : memref<262144xf32>
    %a = nisa.alloc : !t
    %c = nisa.alloc : !t
    nisa.dma_copy %a <0, [512, 1], [128, 512]>, %win <0, [512, 1], [128, 512]> : !t, memref<262144xf32>
    nisa.dma_copy %ws <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : memref<262144xf32>, !t
    nisa.dma_copy %c <0, [512, 1], [128, 512]>, %ws <65536, [512, 1], [128, 512]> : !t, memref<262144xf32>
    nisa.dma_copy %wout <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : memref<262144xf32>, !t
  }
  return
}
func.func @loop_to_loop(%in: memref<262144xf32> {nisa.input = 0 : i64},
                        %out: memref<262144xf32> {nisa.output = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = nisa.dram_alloc : memref<262144xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %win = nisa.hbm_window %in[%i * 65536] : memref<262144xf32>
    %ws = nisa.hbm_window %s[%i * 65536] : memref<262144xf32>
    %a = nisa.alloc : !t
    nisa.dma_copy %a <0, [512, 1], [128, 512]>, %win <0, [512, 1], [128, 512]> : !t, memref<262144xf32>
    nisa.dma_copy %ws <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : memref<262144xf32>, !t
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %ws = nisa.hbm_window %s[%i * 65536] : memref<262144xf32>
    %wout = nisa.hbm_window %out[%i * 65536] : memref<262144xf32>
    %c = nisa.alloc : !t
    nisa.dma_copy %c <0, [512, 1], [128, 512]>, %ws <0, [512, 1], [128, 512]> : !t, memref<262144xf32>
    nisa.dma_copy %wout <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : memref<262144xf32>, !t
  }
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// A matmul's two row tiles, emitted one after the other, then a softmax's
// loop over them: both iterations read a tile stored just before, so both
// are peeled (the loop goes) and the tiles handed over. After a loop of
// three, a straight-line load of what its last iteration stored: that
// iteration is peeled after the loop (two iterations stay in it) and its
// tile handed over.
// CHECK-LABEL: func.func @peel_front
// CHECK-NOT: scf.for
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.activation exp %[[A:[0-9]+]]
// CHECK: nisa.activation exp %[[B:[0-9]+]]
// CHECK-NOT: nisa.dma_copy %{{[0-9]+}} <0, [512, 1], [128, 512]>, %{{[0-9]+}} <{{[0-9]+}}, [512, 1], [128, 512]> : !nisa.tile
// CHECK: nisa.activation tanh %{{[0-9]+}} <0, [512, 1], [128, 512]>, %[[A]]
// CHECK: nisa.activation tanh %{{[0-9]+}} <0, [512, 1], [128, 512]>, %[[B]]
// CHECK-LABEL: func.func @peel_back
// CHECK: scf.for %{{.*}} = %c0 to %c2
// CHECK: nisa.activation exp
// CHECK: }
// CHECK: nisa.activation exp %[[L:[0-9]+]]
// CHECK-NEXT: nisa.alloc
// CHECK-NEXT: nisa.activation tanh %{{[0-9]+}} <0, [512, 1], [128, 512]>, %[[L]]
func.func @peel_front(%in: memref<131072xf32> {nisa.input = 0 : i64},
                      %out: memref<131072xf32> {nisa.output = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = nisa.dram_alloc : memref<131072xf32>
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  %x = nisa.alloc : !t
  %y = nisa.alloc : !t
  nisa.dma_copy %x <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.dma_copy %y <0, [512, 1], [128, 512]>, %in <65536, [512, 1], [128, 512]> : !t, memref<131072xf32>
  nisa.activation exp %a <0, [512, 1], [128, 512]>, %x <0, [512, 1], [128, 512]> : !t, !t
  nisa.activation exp %b <0, [512, 1], [128, 512]>, %y <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  nisa.dma_copy %s <65536, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  scf.for %i = %c0 to %c2 step %c1 {
    %ws = nisa.hbm_window %s[%i * 65536] : memref<131072xf32>
    %wout = nisa.hbm_window %out[%i * 65536] : memref<131072xf32>
    %c = nisa.alloc : !t
    %d = nisa.alloc : !t
    nisa.dma_copy %c <0, [512, 1], [128, 512]>, %ws <0, [512, 1], [128, 512]> : !t, memref<131072xf32>
    nisa.activation tanh %d <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : !t, !t
    nisa.dma_copy %wout <0, [512, 1], [128, 512]>, %d <0, [512, 1], [128, 512]> : memref<131072xf32>, !t
  }
  return
}
func.func @peel_back(%in: memref<196608xf32> {nisa.input = 0 : i64},
                     %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s = nisa.dram_alloc : memref<196608xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    %win = nisa.hbm_window %in[%i * 65536] : memref<196608xf32>
    %ws = nisa.hbm_window %s[%i * 65536] : memref<196608xf32>
    %a = nisa.alloc : !t
    %b = nisa.alloc : !t
    nisa.dma_copy %a <0, [512, 1], [128, 512]>, %win <0, [512, 1], [128, 512]> : !t, memref<196608xf32>
    nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
    nisa.dma_copy %ws <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<196608xf32>, !t
  }
  %c = nisa.alloc : !t
  %d = nisa.alloc : !t
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %s <131072, [512, 1], [128, 512]> : !t, memref<196608xf32>
  nisa.activation tanh %d <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %d <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  return
}

// -----

// A software-pipelined loop (each iteration stores the tile the previous one
// computed, carried in iter_args) whose last store a load after the loop
// reads: the last iteration is peeled, its carried input is the loop's
// result, and that tile goes to the load; the loop's result, used after,
// is now the peeled copy's.
// CHECK-LABEL: func.func @peel_back_carried
// CHECK-NOT: nisa.dram_alloc
// CHECK: %[[R:[0-9]+]] = scf.for %{{.*}} = %c0 to %c2
// CHECK: scf.yield
// CHECK: nisa.activation exp %[[L:[0-9]+]]
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [512, 1], [128, 512]>, %[[R]]
// CHECK-NEXT: nisa.dma_copy %arg1 <0, [512, 1], [128, 512]>, %[[L]]
// CHECK-NEXT: return
!t = !nisa.tile<sbuf, 128, 512, f32>

func.func @peel_back_carried(%in: memref<196608xf32> {nisa.input = 0 : i64},
                             %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s = nisa.dram_alloc : memref<196608xf32>
  %t0 = nisa.alloc : !t
  nisa.dma_copy %t0 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<196608xf32>
  %last = scf.for %i = %c0 to %c3 step %c1 iter_args(%prev = %t0) -> (!t) {
    %win = nisa.hbm_window %in[%i * 65536] : memref<196608xf32>
    %ws = nisa.hbm_window %s[%i * 65536] : memref<196608xf32>
    %a = nisa.alloc : !t
    nisa.dma_copy %a <0, [512, 1], [128, 512]>, %win <0, [512, 1], [128, 512]> : !t, memref<196608xf32>
    nisa.activation exp %a <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
    nisa.dma_copy %ws <0, [512, 1], [128, 512]>, %prev <0, [512, 1], [128, 512]> : memref<196608xf32>, !t
    scf.yield %a : !t
  }
  %c = nisa.alloc : !t
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %s <131072, [512, 1], [128, 512]> : !t, memref<196608xf32>
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %last <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  return
}

// -----

!t = !nisa.tile<sbuf, 128, 512, f32>

// The forwarded load was where weight gradients were anchored (the first
// instruction after their data gradient, DeferredProducts.h): the anchor
// goes to the next instruction, not away with the load (the gradients
// would then run at the end).
// CHECK-LABEL: func.func @anchor_on_forwarded_load
// CHECK-NOT: trnc.defer_anchor
// CHECK: nisa.activation tanh {{.*}} {trnc.defer_anchor = array<i64: 0, 2>}
// CHECK-NOT: trnc.defer_anchor
// CHECK: return
func.func @anchor_on_forwarded_load(%in: memref<65536xf32> {nisa.input = 0 : i64},
                                    %out: memref<65536xf32> {nisa.output = 0 : i64}) {
  %s = nisa.dram_alloc : memref<65536xf32>
  %a = nisa.alloc : !t
  %b = nisa.alloc : !t
  %c = nisa.alloc : !t
  %d = nisa.alloc : !t
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %s <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %s <0, [512, 1], [128, 512]> {trnc.defer_anchor = array<i64: 2>} : !t, memref<65536xf32>
  nisa.activation tanh %d <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> {trnc.defer_anchor = array<i64: 0>} : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %d <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  return
}
