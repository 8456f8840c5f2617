// RUN: trnc-opt %s -split-input-file -verify-diagnostics

func.func @engine() {
  %s = nisa.alloc : <sbuf, 4, 2, i32>
  %a = nisa.alloc : <sbuf, 4, 8, f32>
  // expected-error @+1 {{cannot run on the vector engine}}
  nisa.random %a <0, [8, 1], [4, 8]>, %s <0, [2, 1], [4, 2]>, base = 0, coefs = [8, 1] on vector : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 4, 2, i32>
  return
}

// -----

func.func @int_dst() {
  %s = nisa.alloc : <sbuf, 4, 2, i32>
  %a = nisa.alloc : <sbuf, 4, 8, i32>
  // expected-error @+1 {{dst must be f32, bf16 or f16, not 'i32'}}
  nisa.random %a <0, [8, 1], [4, 8]>, %s <0, [2, 1], [4, 2]>, base = 0, coefs = [8, 1] on gpsimd : !nisa.tile<sbuf, 4, 8, i32>, !nisa.tile<sbuf, 4, 2, i32>
  return
}

// -----

func.func @float_seed() {
  %s = nisa.alloc : <sbuf, 4, 2, f32>
  %a = nisa.alloc : <sbuf, 4, 8, f32>
  // expected-error @+1 {{seed must be an i32 tile}}
  nisa.random %a <0, [8, 1], [4, 8]>, %s <0, [2, 1], [4, 2]>, base = 0, coefs = [8, 1] on gpsimd : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 4, 2, f32>
  return
}

// -----

func.func @seed_partitions() {
  %s = nisa.alloc : <sbuf, 4, 2, i32>
  %a = nisa.alloc : <sbuf, 4, 8, f32>
  // expected-error @+1 {{seed must be [4, 2], not [2, 2]}}
  nisa.random %a <0, [8, 1], [4, 8]>, %s <0, [2, 1], [2, 2]>, base = 0, coefs = [8, 1] on gpsimd : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 4, 2, i32>
  return
}

// -----

func.func @base() {
  %s = nisa.alloc : <sbuf, 4, 2, i32>
  %a = nisa.alloc : <sbuf, 4, 8, f32>
  // expected-error @+1 {{counter base must be in [0, 2^48)}}
  nisa.random %a <0, [8, 1], [4, 8]>, %s <0, [2, 1], [4, 2]>, base = -1, coefs = [8, 1] on gpsimd : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 4, 2, i32>
  return
}
