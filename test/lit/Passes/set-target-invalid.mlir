// RUN: trnc-opt %s -verify-diagnostics -trnc-set-target=target=trn2
// RUN: not trnc-opt %s --pass-pipeline='builtin.module(func.func(trnc-allocate-memory{target=trn2}))' 2>&1 | FileCheck %s

// A module compiled for one target is not silently re-targeted, by the
// pipeline or by a pass's own option.
// CHECK: error: target 'trn2' differs from the module's nisa.target 'trn1'
// expected-error @+1 {{target 'trn2' differs from the module's nisa.target 'trn1'}}
module attributes {nisa.target = "trn1"} {
  func.func @f() {
    return
  }
}
