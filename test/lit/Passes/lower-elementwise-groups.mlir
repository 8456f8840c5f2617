// Elementwise ops of one shape lower as one fusion group: one loop over
// tiles, each input loaded once (a convert of an input is the load's cast),
// only results read outside the group stored.
// RUN: trnc-opt %s -split-input-file --trnc-tile-lower-to-nisa | FileCheck %s

// A bf16 chain computed in fp32 (the shape of a GELU backward): two cast
// loads, one store, no HBM scratch. The last op writes bf16 itself (the
// engines compute in fp32 and round on output: the final convert is the
// same value without its own copy).
// CHECK-LABEL: func.func @chain
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %[[A:[0-9]+]] {{.*}}, %arg0 {{.*}} : !nisa.tile<sbuf, 128, 512, f32>, memref<65536xbf16>
// CHECK: nisa.dma_copy %[[B:[0-9]+]] {{.*}}, %arg1 {{.*}} : !nisa.tile<sbuf, 128, 512, f32>, memref<65536xbf16>
// CHECK: nisa.tensor_tensor multiply %[[M:[0-9]+]] {{.*}}, %[[A]] {{.*}}, %[[B]]
// CHECK: nisa.tensor_scalar %[[S:[0-9]+]] {{.*}}, %[[M]] {{.*}} add 1.0{{.*}} : <sbuf, 128, 512, bf16>, <sbuf, 128, 512, f32>
// CHECK-NOT: nisa.tensor_copy
// CHECK: nisa.dma_copy %arg2 {{.*}}, %[[S]]
// CHECK-NOT: nisa.dma_copy
// CHECK: return
func.func @chain(%a: tensor<128x512xbf16>, %b: tensor<128x512xbf16>) -> tensor<128x512xbf16> {
  %0 = trn.convert %a : tensor<128x512xbf16> -> tensor<128x512xf32>
  %1 = trn.convert %b : tensor<128x512xbf16> -> tensor<128x512xf32>
  %2 = trn.mul %0, %1 : tensor<128x512xf32>
  %3 = trn.add_scalar %2, 1.0 : tensor<128x512xf32>
  %4 = trn.convert %3 : tensor<128x512xf32> -> tensor<128x512xbf16>
  return %4 : tensor<128x512xbf16>
}

// -----

// tanh moves up to exp's group across the matmul (it reads only exp); the
// add of the matmul's result cannot join (its operand is not lowered yet).
// exp's result is read by the matmul too, so it is stored as well.
// CHECK-LABEL: func.func @moves_up
// CHECK: nisa.activation exp
// CHECK-NEXT: nisa.alloc
// CHECK-NEXT: nisa.activation tanh
// CHECK: nisa.matmul
// CHECK: nisa.tensor_tensor add
// CHECK: return
func.func @moves_up(%x: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %0 = trn.exp %x : tensor<128x128xf32>
  %1 = trn.matmul %0, %x : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %2 = trn.tanh %0 : tensor<128x128xf32>
  %3 = trn.add %1, %2 : tensor<128x128xf32>
  return %2, %3 : tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// A group value read outside the group (through a transposed view) is
// stored once and still feeds the group's later op on chip.
// CHECK-LABEL: func.func @escapes
// CHECK: %[[SCRATCH:[0-9]+]] = nisa.dram_alloc
// CHECK: nisa.activation exp %[[E:[0-9]+]]
// CHECK: nisa.activation tanh %{{[0-9]+}} {{.*}}, %[[E]]
// CHECK-DAG: nisa.dma_copy %[[SCRATCH]] {{.*}}, %[[E]]
// CHECK-DAG: nisa.dma_copy %arg1
// CHECK: return
func.func @escapes(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %0 = trn.exp %x : tensor<64x64xf32>
  %1 = trn.tanh %0 : tensor<64x64xf32>
  %2 = trn.transpose %0 permutation = [1, 0] : tensor<64x64xf32> -> tensor<64x64xf32>
  %3 = trn.sigmoid %2 : tensor<64x64xf32>
  return %1, %3 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// The broadcast of a bias comes after exp in program order; as a view it
// costs nothing, so the add joins exp's group: no scratch between them.
// CHECK-LABEL: func.func @late_broadcast
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.activation exp %[[E:[0-9]+]]
// CHECK: nisa.tensor_tensor add %{{[0-9]+}} {{.*}}, %[[E]]
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @late_broadcast(%x: tensor<128x512xf32>, %b: tensor<512xf32>) -> tensor<128x512xf32> {
  %0 = trn.exp %x : tensor<128x512xf32>
  %1 = trn.broadcast %b : tensor<512xf32> -> tensor<128x512xf32>
  %2 = trn.add %0, %1 : tensor<128x512xf32>
  return %2 : tensor<128x512xf32>
}

// -----

// A widening cast of a group value (bf16 -> f32) is exact, so its reader
// reads the bf16 tile: no copy.
// CHECK-LABEL: func.func @widening_cast_is_free
// CHECK: nisa.tensor_scalar %[[H:[0-9]+]] {{.*}} : <sbuf, 128, 512, bf16>, <sbuf, 128, 512, bf16>
// CHECK-NOT: nisa.tensor_copy
// CHECK: nisa.activation exp %{{[0-9]+}} {{.*}}, %[[H]]
func.func @widening_cast_is_free(%a: tensor<128x512xbf16>) -> (tensor<128x512xbf16>, tensor<128x512xf32>) {
  %0 = trn.mul_scalar %a, 2.0 : tensor<128x512xbf16>
  %1 = trn.convert %0 : tensor<128x512xbf16> -> tensor<128x512xf32>
  %2 = trn.exp %1 : tensor<128x512xf32>
  return %0, %2 : tensor<128x512xbf16>, tensor<128x512xf32>
}
