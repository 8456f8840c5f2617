// RUN: trnc-opt %s | trnc-opt | FileCheck %s

// CHECK-LABEL: func.func @collective
// CHECK: nisa.collective %arg1 <0, [64, 1], [1, 64]>, %arg0 <0, [32, 1], [1, 32]> all_gather none group 2 id 7 span instance : memref<64xbf16>, memref<32xbf16>
func.func @collective(%in: memref<32xbf16>, %out: memref<64xbf16>) {
  nisa.collective %out <0, [64, 1], [1, 64]>, %in <0, [32, 1], [1, 32]> all_gather none group 2 id 7 span instance : memref<64xbf16>, memref<32xbf16>
  return
}
