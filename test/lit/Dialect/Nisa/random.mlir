// RUN: trnc-opt %s | trnc-opt | FileCheck %s

// CHECK-LABEL: func.func @ok
// CHECK: nisa.random %{{.*}} <0, [8, 1], [4, 8]>, %{{.*}} <0, [2, 1], [4, 2]>, base = 281474976710655, coefs = [8, 1] on gpsimd : {{.*}}<sbuf, 4, 8, f32>, {{.*}}<sbuf, 128, 2, i32>
// CHECK: nisa.random %{{.*}} base = 0, coefs = [0, 1] on gpsimd : {{.*}}<sbuf, 1, 16, bf16>
func.func @ok() {
  %seed = nisa.alloc : <sbuf, 128, 2, i32>
  %a = nisa.alloc : <sbuf, 4, 8, f32>
  %b = nisa.alloc : <sbuf, 1, 16, bf16>
  nisa.random %a <0, [8, 1], [4, 8]>, %seed <0, [2, 1], [4, 2]>, base = 281474976710655, coefs = [8, 1] on gpsimd : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 128, 2, i32>
  nisa.random %b <0, [16, 1], [1, 16]>, %seed <0, [2, 1], [1, 2]>, base = 0, coefs = [0, 1] on gpsimd : !nisa.tile<sbuf, 1, 16, bf16>, !nisa.tile<sbuf, 128, 2, i32>
  return
}
