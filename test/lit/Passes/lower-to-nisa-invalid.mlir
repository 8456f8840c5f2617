// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --allow-unregistered-dialect -verify-diagnostics

func.func @unsupported(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has no lowering to nisa}}
  %0 = "foo.bar"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
