// RUN: trnc-opt %s -split-input-file -verify-diagnostics

func.func @iota_engine() {
  %a = nisa.alloc : <sbuf, 4, 8, f32>
  // expected-error @+1 {{engine}}
  nisa.iota %a <0, [8, 1], [4, 8]>, base = 1.0, scale = 2.0, coefs = [8, 1] on vector : !nisa.tile<sbuf, 4, 8, f32>
  return
}

// -----

func.func @select_op() {
  %a = nisa.alloc : <sbuf, 4, 8, f32>
  %b = nisa.alloc : <sbuf, 4, 8, f32>
  // expected-error @+1 {{predicate must be a comparison, not add}}
  nisa.affine_select add %b <0, [8, 1], [4, 8]>, %a <0, [8, 1], [4, 8]>, offset = 0.0, coefs = [-1, 1], fill = 0.0 on gpsimd : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 4, 8, f32>
  return
}
