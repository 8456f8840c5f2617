// Local repair in the list scheduler: hoisting the loads of 40 independent
// tiles of mixed sizes (Inputs/fragmented_tiles.py) fragments SBUF, and the
// 20th exp's 48 KiB result finds no gap though 110 KiB are free. Without
// checkpoints (checkpoints=0) that schedule fails and the next variant starts
// over; with them it goes back to a checkpoint and redoes the stretch with
// small tiles placed apart, then (again fragmented) from an earlier one with
// half the prefetch budget, and completes. Every schedule is also computed
// at 0.8 and 0.5 of the budget (ListSchedule.cpp kPrefetchShares), and the
// fastest is kept.
// The order kept is checked by the allocator (no two live tiles share a byte).
//
// RUN: %python %S/Inputs/fragmented_tiles.py | trnc-opt -trnc-pipeline-list-schedule="report=true" -trnc-allocate-memory --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// RUN: %python %S/Inputs/fragmented_tiles.py | trnc-opt -trnc-pipeline-list-schedule="report=true checkpoints=0" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE

// CHECK: remark: list schedule: program order [[PO:[0-9]+]] ns; index priority, budget 0.75: {{[0-9]+}} ns (2 local repairs); index priority, budget 0.60: {{[0-9]+}} ns (2 local repairs); index priority, budget 0.38: {{[0-9]+}} ns; critical path priority, budget 0.75: {{[0-9]+}} ns; critical path priority, budget 0.60: {{[0-9]+}} ns; critical path priority, budget 0.38: {{[0-9]+}} ns; kept {{[0-9]+}} ns
// CHECK-NOT: error

// NONE: remark: list schedule: program order {{[0-9]+}} ns; index priority, budget 0.75: no gap for the tiles of instruction 19 (nisa.activation, 24 scheduled): 49152 B per partition; SBUF holds 110592 B live, largest gap 38912 B; index priority, budget 0.75, small tiles apart: no gap for the tiles of instruction 19 (nisa.activation, 24 scheduled): 49152 B per partition; SBUF holds 110592 B live, largest gap 38912 B; index priority, budget 0.60: no gap for the tiles of instruction 19 {{.*}}; index priority, budget 0.38: {{[0-9]+}} ns; {{.*}}kept {{[0-9]+}} ns
