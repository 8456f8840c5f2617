// RUN: trnc-opt %s -trnc-pipeline-list-schedule | FileCheck %s

!t = !nisa.tile<sbuf, 128, 512, f32>

// A collective whose input is ready goes before earlier-indexed transfers,
// so the communication runs behind the compute that follows instead of
// after it (exposed); the load -> exp -> store chains keep their order.
// CHECK-LABEL: func.func @collective_first
// CHECK-COUNT-2: nisa.alloc
// CHECK-NEXT: nisa.collective %arg2
// CHECK-NEXT: nisa.dma_copy %{{.*}}, %arg0 <0,
// CHECK: nisa.activation exp
// CHECK: nisa.dma_copy %arg1
func.func @collective_first(%in: memref<65536xf32> {nisa.input = 0 : i64},
                            %out: memref<65536xf32> {nisa.output = 0 : i64},
                            %red: memref<65536xf32> {nisa.output = 1 : i64}) {
  %t0 = nisa.alloc : !t
  %u0 = nisa.alloc : !t
  nisa.dma_copy %t0 <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !t, memref<65536xf32>
  nisa.activation exp %u0 <0, [512, 1], [128, 512]>, %t0 <0, [512, 1], [128, 512]> : !t, !t
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %u0 <0, [512, 1], [128, 512]> : memref<65536xf32>, !t
  nisa.collective %red <0, [65536, 1], [1, 65536]>, %in <0, [65536, 1], [1, 65536]> all_reduce sum group 2 id 0 span chip : memref<65536xf32>, memref<65536xf32>
  return
}
