// Attention the lowering cannot place on chip is refused by name.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa -split-input-file -verify-diagnostics

func.func @head_too_wide(%q: tensor<1x1x8x160xf32>) -> (tensor<1x8x1x160xf32>, tensor<1x1x8xf32>) {
  // expected-error @+1 {{attention head sizes above 128 partitions are not supported (E = 160, Ev = 160)}}
  %o, %lse = trn.attention %q, %q, %q {scale = 0.25 : f64} : (tensor<1x1x8x160xf32>, tensor<1x1x8x160xf32>, tensor<1x1x8x160xf32>) -> (tensor<1x8x1x160xf32>, tensor<1x1x8xf32>)
  return %o, %lse : tensor<1x8x1x160xf32>, tensor<1x1x8xf32>
}

// -----

func.func @row_too_long(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x2050x16xf32>) -> (tensor<1x8x1x16xf32>, tensor<1x1x8xf32>) {
  // expected-error @+1 {{attention rows of 2050 keys exceed four PSUM banks (2048)}}
  %o, %lse = trn.attention %q, %k, %k {scale = 0.25 : f64} : (tensor<1x1x8x16xf32>, tensor<1x1x2050x16xf32>, tensor<1x1x2050x16xf32>) -> (tensor<1x8x1x16xf32>, tensor<1x1x8xf32>)
  return %o, %lse : tensor<1x8x1x16xf32>, tensor<1x1x8xf32>
}
