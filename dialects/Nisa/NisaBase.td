//===- NisaBase.td - nisa dialect, enums, attributes, types -*- tablegen -*-===//
//
// The instruction-level dialect: one op per engine instruction. On-chip
// buffers are `!nisa.tile` values (SBUF or PSUM, [partitions, free]); HBM
// buffers are 1-D builtin memrefs. Every operand is a (buffer, access
// pattern) pair. Enum values equal the binary encoding in runtime/isa/Isa.h.
//
//===----------------------------------------------------------------------===//
#ifndef NISA_BASE
#define NISA_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Nisa_Dialect : Dialect {
  let name = "nisa";
  let cppNamespace = "::trnc::nisa";
  let summary = "NeuronCore instructions over SBUF, PSUM and HBM";
  let description = [{
    Ops map one-to-one to instructions of the Tensor, Vector, Scalar, GpSimd
    and DMA engines (after the NKI ISA). Operands are access patterns:
    an element offset into the buffer's linear element space plus up to five
    (stride, count) dims, outermost first. For a tile the outermost dim walks
    partitions (its stride is the tile's free size). Semaphore waits and
    signals are attributes set by the scheduling pass.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// The module attribute naming the NeuronCore target ("trn2"): set once
    /// (trnc-set-target), read by every pass and verifier that needs sizes
    /// or costs.
    static constexpr ::llvm::StringLiteral kTargetAttrName = "nisa.target";
  }];
}

//===----------------------------------------------------------------------===//
// Enums (values equal trnc::isa)
//===----------------------------------------------------------------------===//

def Nisa_Engine : I32EnumAttr<"Engine", "a NeuronCore engine", [
    I32EnumAttrCase<"tensor", 0>, I32EnumAttrCase<"vector", 1>,
    I32EnumAttrCase<"scalar", 2>, I32EnumAttrCase<"gpsimd", 3>,
    I32EnumAttrCase<"dma", 4>]> {
  let cppNamespace = "::trnc::nisa";
}

def Nisa_MemorySpace : I32EnumAttr<"MemorySpace", "on-chip memory", [
    I32EnumAttrCase<"sbuf", 1>, I32EnumAttrCase<"psum", 2>]> {
  let cppNamespace = "::trnc::nisa";
}

def Nisa_AluOp : I32EnumAttr<"AluOp", "Vector/GpSimd ALU operation", [
    I32EnumAttrCase<"bypass", 0>, I32EnumAttrCase<"add", 1>,
    I32EnumAttrCase<"subtract", 2>, I32EnumAttrCase<"multiply", 3>,
    I32EnumAttrCase<"divide", 4>, I32EnumAttrCase<"max", 5>,
    I32EnumAttrCase<"min", 6>, I32EnumAttrCase<"pow", 7>,
    I32EnumAttrCase<"is_equal", 8>, I32EnumAttrCase<"not_equal", 9>,
    I32EnumAttrCase<"is_gt", 10>, I32EnumAttrCase<"is_ge", 11>,
    I32EnumAttrCase<"is_lt", 12>, I32EnumAttrCase<"is_le", 13>,
    I32EnumAttrCase<"logical_and", 14>, I32EnumAttrCase<"logical_or", 15>,
    I32EnumAttrCase<"logical_xor", 16>, I32EnumAttrCase<"bitwise_and", 17>,
    I32EnumAttrCase<"bitwise_or", 18>, I32EnumAttrCase<"bitwise_xor", 19>,
    I32EnumAttrCase<"remainder", 20>, I32EnumAttrCase<"fmod", 21>,
    I32EnumAttrCase<"floor_divide", 22>]> {
  let cppNamespace = "::trnc::nisa";
}

def Nisa_ActFunc : I32EnumAttr<"ActFunc", "Scalar engine activation", [
    I32EnumAttrCase<"copy", 0>, I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"exp", 2>, I32EnumAttrCase<"log", 3>,
    I32EnumAttrCase<"tanh", 4>, I32EnumAttrCase<"sigmoid", 5>,
    I32EnumAttrCase<"gelu", 6>, I32EnumAttrCase<"gelu_tanh", 7>,
    I32EnumAttrCase<"silu", 8>, I32EnumAttrCase<"sqrt", 9>,
    I32EnumAttrCase<"rsqrt", 10>, I32EnumAttrCase<"reciprocal", 11>,
    I32EnumAttrCase<"square", 12>, I32EnumAttrCase<"abs", 13>,
    I32EnumAttrCase<"sign", 14>, I32EnumAttrCase<"erf", 15>,
    I32EnumAttrCase<"sin", 16>, I32EnumAttrCase<"softplus", 17>,
    I32EnumAttrCase<"cos", 18>, I32EnumAttrCase<"expm1", 19>,
    I32EnumAttrCase<"log1p", 20>, I32EnumAttrCase<"mish", 21>,
    I32EnumAttrCase<"floor", 22>, I32EnumAttrCase<"ceil", 23>,
    I32EnumAttrCase<"round", 24>, I32EnumAttrCase<"trunc", 25>,
    I32EnumAttrCase<"is_nan", 26>, I32EnumAttrCase<"is_inf", 27>,
    I32EnumAttrCase<"gelu_dx", 28>, I32EnumAttrCase<"silu_dx", 29>]> {
  let cppNamespace = "::trnc::nisa";
}

//===----------------------------------------------------------------------===//
// Attributes and types
//===----------------------------------------------------------------------===//

def Nisa_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "what a collective instruction does", [
    I32EnumAttrCase<"all_reduce", 0>, I32EnumAttrCase<"all_gather", 1>,
    I32EnumAttrCase<"reduce_scatter", 2>, I32EnumAttrCase<"all_to_all", 3>,
    I32EnumAttrCase<"broadcast", 4>]> {
  let cppNamespace = "::trnc::nisa";
}

def Nisa_ReduceOp : I32EnumAttr<"ReduceOp", "a collective's reduction", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"avg", 2>, I32EnumAttrCase<"product", 3>,
    I32EnumAttrCase<"min", 4>, I32EnumAttrCase<"max", 5>]> {
  let cppNamespace = "::trnc::nisa";
}

// The widest link a replica group spans (Isa.h kFlagSpan*).
def Nisa_CollectiveSpan : I32EnumAttr<"CollectiveSpan",
    "the widest link a collective's group spans", [
    I32EnumAttrCase<"chip", 0>, I32EnumAttrCase<"instance", 1>,
    I32EnumAttrCase<"cluster", 2>]> {
  let cppNamespace = "::trnc::nisa";
}

def Nisa_AccessPatternAttr : AttrDef<Nisa_Dialect, "AccessPattern"> {
  let mnemonic = "ap";
  let summary = "an access pattern: element offset and (stride, count) dims";
  let description = [{
    `#nisa.ap<offset, [strides], [counts]>`, strides and counts in elements,
    outermost dim first, 1 to 5 dims. On a tile the first dim walks
    partitions (stride = the tile's free size) and the others stay inside one
    partition (at most 4 free dims, as the hardware allows). On an HBM memref
    the first dim pairs with the on-chip partition dim of a DMA.

    ```mlir
    #nisa.ap<0, [512, 1], [128, 512]>
    ```
  }];
  let parameters = (ins "int64_t":$offset,
                        ArrayRefParameter<"int64_t">:$strides,
                        ArrayRefParameter<"int64_t">:$counts);
  let assemblyFormat = "`<` $offset `,` `[` $strides `]` `,` `[` $counts `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Product of all counts.
    int64_t getNumElements() const;
    /// Number of dims.
    unsigned getRank() const { return getCounts().size(); }
  }];
}

def Nisa_TileType : TypeDef<Nisa_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "an on-chip buffer of [partitions, free elements]";
  let description = [{
    ```mlir
    !nisa.tile<sbuf, 128, 512, bf16>
    !nisa.tile<psum, 128, 512, f32>
    ```
  }];
  let parameters = (ins EnumParameter<Nisa_MemorySpace>:$space,
                        "int64_t":$partitions, "int64_t":$freeSize,
                        "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $space `,` $partitions `,` $freeSize `,` $elementType `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes one partition of this tile occupies.
    int64_t getPartitionBytes() const;
  }];
}

class Nisa_Op<string mnemonic, list<Trait> traits = []>
    : Op<Nisa_Dialect, mnemonic, traits>;

#endif // NISA_BASE
