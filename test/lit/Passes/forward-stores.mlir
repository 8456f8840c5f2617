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
