// Attention the lowering cannot place on chip is refused by name.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa -split-input-file -verify-diagnostics

func.func @head_too_wide(%q: tensor<1x1x8x160xf32>) -> (tensor<1x8x1x160xf32>, tensor<1x1x8xf32>) {
  // expected-error @+1 {{attention head sizes above 128 partitions are not supported (E = 160, Ev = 160)}}
  %o, %lse = trn.attention %q, %q, %q {scale = 0.25 : f64} : (tensor<1x1x8x160xf32>, tensor<1x1x8x160xf32>, tensor<1x1x8x160xf32>) -> (tensor<1x8x1x160xf32>, tensor<1x1x8xf32>)
  return %o, %lse : tensor<1x8x1x160xf32>, tensor<1x1x8xf32>
}

// -----

// One head's keys and values stay resident in SBUF: fp32 K^T [128, 16384] and
// the K, V row blocks are 192 KiB per partition, above trn2's 224 KiB less
// the 64 KiB kept for working tiles.
func.func @keys_beyond_sbuf(%q: tensor<1x1x8x128xf32>, %k: tensor<1x1x16384x128xf32>) -> (tensor<1x8x1x128xf32>, tensor<1x1x8xf32>) {
  // expected-error @+1 {{attention over 16384 keys keeps 197120 bytes per partition of keys and values in SBUF, above the 163840 the target leaves beside the working tiles}}
  %o, %lse = trn.attention %q, %k, %k {scale = 0.25 : f64} : (tensor<1x1x8x128xf32>, tensor<1x1x16384x128xf32>, tensor<1x1x16384x128xf32>) -> (tensor<1x8x1x128xf32>, tensor<1x1x8xf32>)
  return %o, %lse : tensor<1x8x1x128xf32>, tensor<1x1x8xf32>
}

// -----

// The gradient also keeps V^T, the dK, dV results and the query side: 8192
// fp32 keys of head size 128 (8 queries) need 193.8 KiB per partition.
func.func @gradient_keys_beyond_sbuf(%q: tensor<1x1x8x128xf32>, %k: tensor<1x1x8192x128xf32>, %lse: tensor<1x1x8xf32>) -> (tensor<1x8x1x128xf32>, tensor<1x8192x1x128xf32>, tensor<1x8192x1x128xf32>) {
  // expected-error @+1 {{attention over 8192 keys keeps 198476 bytes per partition}}
  %dq, %dk, %dv = trn.attention_grad %q, %q, %k, %k, %q, %lse {scale = 0.25 : f64} : (tensor<1x1x8x128xf32>, tensor<1x1x8x128xf32>, tensor<1x1x8192x128xf32>, tensor<1x1x8192x128xf32>, tensor<1x1x8x128xf32>, tensor<1x1x8xf32>) -> (tensor<1x8x1x128xf32>, tensor<1x8192x1x128xf32>, tensor<1x8192x1x128xf32>)
  return %dq, %dk, %dv : tensor<1x8x1x128xf32>, tensor<1x8192x1x128xf32>, tensor<1x8192x1x128xf32>
}
