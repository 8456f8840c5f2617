// RUN: trnc-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// trn.gather_rows / trn.scatter_rows: round trip, then each verifier rule.

// CHECK-LABEL: func.func @ok
// CHECK: trn.gather_rows %arg0, %arg1 : tensor<10x6xf32>, tensor<5xi64> -> tensor<5x6xf32>
// CHECK: trn.scatter_rows %arg0, %arg2, %arg3 accumulate : tensor<10x6xf32>, tensor<4xi32>, tensor<4x6xf32> -> tensor<10x6xf32>
func.func @ok(%t: tensor<10x6xf32>, %i: tensor<5xi64>, %j: tensor<4xi32>, %s: tensor<4x6xf32>) -> (tensor<5x6xf32>, tensor<10x6xf32>) {
  %g = trn.gather_rows %t, %i : tensor<10x6xf32>, tensor<5xi64> -> tensor<5x6xf32>
  %r = trn.scatter_rows %t, %j, %s accumulate : tensor<10x6xf32>, tensor<4xi32>, tensor<4x6xf32> -> tensor<10x6xf32>
  return %g, %r : tensor<5x6xf32>, tensor<10x6xf32>
}

// -----

func.func @table_rank(%t: tensor<10x6x2xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{table must be 2-D [N, D], got rank 3}}
  %g = trn.gather_rows %t, %i : tensor<10x6x2xf32>, tensor<5xi64> -> tensor<5x6xf32>
  return
}

// -----

func.func @index_rank(%t: tensor<10x6xf32>, %i: tensor<5x1xi64>) {
  // expected-error @+1 {{index must be 1-D, got rank 2}}
  %g = trn.gather_rows %t, %i : tensor<10x6xf32>, tensor<5x1xi64> -> tensor<5x6xf32>
  return
}

// -----

func.func @index_type(%t: tensor<10x6xf32>, %i: tensor<5xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %g = trn.gather_rows %t, %i : tensor<10x6xf32>, tensor<5xf32> -> tensor<5x6xf32>
  return
}

// -----

func.func @gather_result(%t: tensor<10x6xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{result must be [5, 6] (M x D)}}
  %g = trn.gather_rows %t, %i : tensor<10x6xf32>, tensor<5xi64> -> tensor<5x7xf32>
  return
}

// -----

func.func @scatter_width(%t: tensor<10x6xf32>, %i: tensor<4xi32>, %s: tensor<4x5xf32>) {
  // expected-error @+1 {{src must be [4, 6] (M x D)}}
  %r = trn.scatter_rows %t, %i, %s : tensor<10x6xf32>, tensor<4xi32>, tensor<4x5xf32> -> tensor<10x6xf32>
  return
}

// -----

func.func @scatter_dtype(%t: tensor<10x6xf32>, %i: tensor<4xi32>, %s: tensor<4x6xbf16>) {
  // expected-error @+1 {{src element type must be the base's}}
  %r = trn.scatter_rows %t, %i, %s : tensor<10x6xf32>, tensor<4xi32>, tensor<4x6xbf16> -> tensor<10x6xf32>
  return
}
