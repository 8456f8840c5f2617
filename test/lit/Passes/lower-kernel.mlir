// RUN: trnc-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(trnc-compile{compile-to=tile})' | FileCheck %s

// A trnc.nki kernel called in a graph: its instructions are cloned into the
// body, its arguments bound to the operand's and result's HBM buffers.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[IN:[a-z0-9]+]]: memref<8192xf32> {nisa.input = 0
// CHECK: %[[OUT:[0-9]+]] = nisa.dram_alloc : memref<8192xf32>
// CHECK: nisa.dma_copy %[[T:[0-9]+]] <0, [64, 1], [128, 64]>, %[[IN]] <0, [64, 1], [128, 64]>
// CHECK: nisa.activation exp %[[U:[0-9]+]] {{.*}}, %[[T]]
// CHECK: nisa.dma_copy %[[OUT]] <0, [64, 1], [128, 64]>, %[[U]]
// The graph's own op reads the kernel's result.
// CHECK: nisa.dma_copy %{{[0-9]+}} {{.*}}, %[[OUT]]
// CHECK: nisa.activation tanh
func.func @main(%x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %0 = trn.nki_kernel "trnc_nki.exp.default" (%x) kernel = "module { func.func @main(%a: memref<8192xf32> {nisa.input = 0 : i64}, %o: memref<8192xf32> {nisa.output = 0 : i64}) { %t = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>\n nisa.dma_copy %t <0, [64, 1], [128, 64]>, %a <0, [64, 1], [128, 64]> : !nisa.tile<sbuf, 128, 64, f32>, memref<8192xf32>\n %u = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>\n nisa.activation exp %u <0, [64, 1], [128, 64]>, %t <0, [64, 1], [128, 64]> : !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 64, f32>\n nisa.dma_copy %o <0, [64, 1], [128, 64]>, %u <0, [64, 1], [128, 64]> : memref<8192xf32>, !nisa.tile<sbuf, 128, 64, f32>\n return } }" : (tensor<128x64xf32>) -> tensor<128x64xf32>
  %1 = trn.tanh %0 : tensor<128x64xf32>
  return %1 : tensor<128x64xf32>
}

// -----

func.func @mismatch(%x: tensor<128x32xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{kernel argument 0 is 'memref<8192xf32>', the tensor it is bound to has 4096 elements of 'f32'}}
  %0 = trn.nki_kernel "trnc_nki.k.default" (%x) kernel = "module { func.func @main(%a: memref<8192xf32> {nisa.input = 0 : i64}, %o: memref<8192xf32> {nisa.output = 0 : i64}) { return } }" : (tensor<128x32xf32>) -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}
