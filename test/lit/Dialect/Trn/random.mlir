// RUN: trnc-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// trn.random: round trip, then the seed rule.

// CHECK-LABEL: func.func @ok
// CHECK: trn.random %arg0 : tensor<2xi32> -> tensor<4x8xbf16>
func.func @ok(%s: tensor<2xi32>) -> tensor<4x8xbf16> {
  %0 = trn.random %s : tensor<2xi32> -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @seed_words(%s: tensor<3xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{seed must be tensor<2xi32>, not 'tensor<3xi32>'}}
  %0 = trn.random %s : tensor<3xi32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
