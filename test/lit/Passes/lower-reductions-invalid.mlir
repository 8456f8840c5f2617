// RUN: trnc-opt %s --trnc-tile-lower-to-nisa -split-input-file -verify-diagnostics

// A softmax row must fit one SBUF tile (2048 fp32 per partition here).
func.func @softmax_row_too_long(%x: tensor<2x5000xf32>) -> tensor<2x5000xf32> {
  // expected-error @+1 {{softmax rows of 5000 elements exceed one SBUF tile (2048)}}
  %0 = trn.softmax %x dim = 1 : tensor<2x5000xf32>
  return %0 : tensor<2x5000xf32>
}
