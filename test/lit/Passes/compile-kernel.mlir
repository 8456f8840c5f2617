// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile-kernel{target=trn1})' | FileCheck %s
// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile-kernel{target=trn1 list-schedule=false})' | FileCheck %s --check-prefix=ORDER

// A hand-written kernel (trnc.nki's output): tiles without addresses, no
// semaphores. The kernel pipeline hoists the second load over the first
// tile's compute, allocates, and synchronises the engines.
// CHECK-LABEL: func.func @main
// CHECK: nisa.alloc {address =
// CHECK: nisa.dma_copy %{{[0-9]+}} {{.*}}, %arg0 <0,
// CHECK-NEXT: nisa.dma_copy %{{[0-9]+}} {{.*}}, %arg0 <65536,
// CHECK-NEXT: nisa.activation exp {{.*}}waits = array<i64: 5, 1>
// CHECK: nisa.activation exp {{.*}}waits = array<i64: 6, 1>
// Without the list scheduler the kernel's order stays: load, exp, store, load.
// ORDER: nisa.dma_copy %{{[0-9]+}} {{.*}}, %arg0 <0,
// ORDER: nisa.activation exp
// ORDER: nisa.dma_copy %arg1 <0,
// ORDER: nisa.dma_copy %{{[0-9]+}} {{.*}}, %arg0 <65536,
func.func @main(%in: memref<131072xf32> {nisa.input = 0 : i64, nisa.shape = array<i64: 256, 512>, nisa.strides = array<i64: 512, 1>},
                %out: memref<131072xf32> {nisa.output = 0 : i64, nisa.shape = array<i64: 256, 512>, nisa.strides = array<i64: 512, 1>}) {
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %a <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<131072xf32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.activation exp %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %out <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> : memref<131072xf32>, !nisa.tile<sbuf, 128, 512, f32>
  %c = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %c <0, [512, 1], [128, 512]>, %in <65536, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, memref<131072xf32>
  %d = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.activation exp %d <0, [512, 1], [128, 512]>, %c <0, [512, 1], [128, 512]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
  nisa.dma_copy %out <65536, [512, 1], [128, 512]>, %d <0, [512, 1], [128, 512]> : memref<131072xf32>, !nisa.tile<sbuf, 128, 512, f32>
  return
}
