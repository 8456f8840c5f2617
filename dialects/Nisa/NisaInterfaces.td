//===- NisaInterfaces.td - the instruction op interface ----*- tablegen -*-===//
//
// What the allocation and scheduling passes and the emitter need to know of
// any instruction, without a switch over op kinds: which engine runs it and
// which bytes it reads and writes.
//
//===----------------------------------------------------------------------===//
#ifndef NISA_INTERFACES
#define NISA_INTERFACES

include "mlir/IR/OpBase.td"

def Nisa_InstructionOpInterface : OpInterface<"InstructionOpInterface"> {
  let cppNamespace = "::trnc::nisa";
  let description = [{
    An op that is exactly one engine instruction. Operands follow one naming
    convention: `dst` (written) with `dst_ap`, then `src0`/`src0_ap`, and
    `src1`/`src1_ap` when present. Semaphore `waits` (pairs of semaphore,
    value) and `signal` are optional attributes set by scheduling. An op
    without operands (`nisa.nop`) has no accesses.
  }];
  let methods = [
    InterfaceMethod<"The engine that executes this instruction.",
      "::trnc::nisa::Engine", "getExecutionEngine", (ins), [{}],
      [{ return ::trnc::nisa::detail::getExecutionEngine($_op); }]>,
    InterfaceMethod<"Every operand access; the first one is the write.",
      "::llvm::SmallVector<::trnc::nisa::Access, 3>", "getAccesses", (ins),
      [{}], [{ return ::trnc::nisa::detail::getAccesses($_op); }]>,
  ];
}

#endif // NISA_INTERFACES
