// RUN: trnc-opt %s -split-input-file -verify-diagnostics

func.func @matmul_k(%a: tensor<8x16xf32>, %b: tensor<15x4xf32>) {
  // expected-error @+1 {{contraction sizes differ: lhs has K = 16, rhs has K = 15}}
  %0 = trn.matmul %a, %b : (tensor<8x16xf32>, tensor<15x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<2x8x16xf32>, %b: tensor<16x4xf32>) {
  // expected-error @+1 {{expects operands and result of rank 2 (or 3 with a batch dim)}}
  %0 = trn.matmul %a, %b : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @matmul_dtype(%a: tensor<8x16xbf16>, %b: tensor<16x4xf32>) {
  // expected-error @+1 {{operands and result must share one element type}}
  %0 = trn.matmul %a, %b : (tensor<8x16xbf16>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @reduce_unsorted(%a: tensor<8x16xf32>) {
  // expected-error @+1 {{dims must be sorted and unique}}
  %0 = trn.reduce_sum %a dims = [1, 0] : tensor<8x16xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_shape(%a: tensor<8x16xf32>) {
  // expected-error @+1 {{result shape does not drop the reduced dims}}
  %0 = trn.reduce_sum %a dims = [0] : tensor<8x16xf32> -> tensor<8xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<8x16xf32>) {
  // expected-error @+1 {{permutation is not a permutation of 0..1}}
  %0 = trn.transpose %a permutation = [0, 0] : tensor<8x16xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<8x16xf32>) {
  // expected-error @+1 {{element count changes from 128 to 120}}
  %0 = trn.reshape %a : tensor<8x16xf32> -> tensor<120xf32>
  return
}

// -----

func.func @broadcast_dim(%a: tensor<3xf32>) {
  // expected-error @+1 {{input dim 0 of size 3 cannot broadcast to 4}}
  %0 = trn.broadcast %a : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @binary_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "trn.add"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @dtype(%a: tensor<4xf64>) {
  // expected-error @+1 {{must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float}}
  %0 = trn.relu %a : tensor<4xf64>
  return
}

// -----

func.func @attention_rank(%q: tensor<8x16xf32>) {
  // expected-error @+1 {{expects q, k, v of rank 4 [N, H, L|S, E], got 2, 2, 2}}
  %o, %l = trn.attention %q, %q, %q {scale = 0.25 : f64} : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8xf32>)
  return
}

// -----

func.func @attention_out_layout(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{out must be 'tensor<1x8x2x16xf32>', got 'tensor<1x2x8x16xf32>'}}
  %o, %l = trn.attention %q, %q, %q {scale = 0.25 : f64} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @attention_kv_lengths(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x9x16xf32>, %v: tensor<1x2x10x16xf32>) {
  // expected-error @+1 {{k and v sequence lengths differ: 9 vs 10}}
  %o, %l = trn.attention %q, %k, %v {scale = 0.25 : f64} : (tensor<1x2x8x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x10x16xf32>) -> (tensor<1x8x2x16xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @attention_grad_lse(%q: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xbf16>) {
  // expected-error @+1 {{lse must be 'tensor<1x2x8xf32>', got 'tensor<1x2x8xbf16>'}}
  %dq, %dk, %dv = trn.attention_grad %q, %q, %q, %q, %q, %lse {scale = 0.25 : f64} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xbf16>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}

// -----

func.func @attention_grad_layout(%q: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>) {
  // expected-error @+1 {{dq must be 'tensor<1x8x2x16xf32>', got 'tensor<1x2x8x16xf32>'}}
  %dq, %dk, %dv = trn.attention_grad %q, %q, %q, %q, %q, %lse {scale = 0.25 : f64} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>)
  return
}
