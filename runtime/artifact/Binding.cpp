//===- Binding.cpp - Check caller buffers against a program's I/O regions --===//
//
// See Binding.h. Zero-element tensors: the program still names a one-element
// region for them, so the caller binds a small scratch buffer whose
// bytesAvailable covers that element; the shape check still applies.
//
//===----------------------------------------------------------------------===//

#include "artifact/Binding.h"

#include <algorithm>

namespace trnc {
namespace {

std::string listText(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string layoutText(const std::string &dtype, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &strides) {
  return dtype + listText(shape) + " strides " + listText(strides);
}

std::string checkOne(const Region &r, const BufferView &b) {
  std::string dtype(isa::dtypeName(r.dtype));
  std::vector<int64_t> strides = r.layoutStrides();
  std::string expected = layoutText(dtype, r.shape, strides);
  std::string got = layoutText(b.dtype, b.shape, b.strides);
  bool same = b.dtype == dtype && b.shape == r.shape && b.strides.size() == strides.size();
  // A size-1 dim is never stepped over; a zero-element tensor is never
  // stepped at all: their strides do not matter.
  bool empty = std::find(r.shape.begin(), r.shape.end(), 0) != r.shape.end();
  for (size_t d = 0; same && !empty && d < strides.size(); ++d)
    same = r.shape[d] == 1 || b.strides[d] == strides[d];
  if (!same)
    return "the artifact expects " + expected + ", got " + got;
  if (r.bytes && !b.data)
    return "is a null pointer (the artifact reads " + std::to_string(r.bytes) + " bytes)";
  if (b.bytesAvailable < r.bytes)
    return "holds " + std::to_string(b.bytesAvailable) + " bytes of storage, but the artifact's " +
           expected + " region spans " + std::to_string(r.bytes);
  return "";
}

} // namespace

std::string checkBindings(const Program &program, const std::vector<BufferView> &inputs,
                          const std::vector<BufferView> &outputs) {
  const std::string graph = "graph '" + program.name + "'";
  if (inputs.size() != program.numInputs())
    return graph + " takes " + std::to_string(program.numInputs()) + " inputs, got " +
           std::to_string(inputs.size());
  if (outputs.size() != program.numOutputs())
    return graph + " produces " + std::to_string(program.numOutputs()) +
           " outputs, got " + std::to_string(outputs.size()) + " output buffers";
  for (const Region &r : program.regions) {
    bool in = r.kind == Region::Kind::Input;
    if (!in && r.kind != Region::Kind::Output)
      continue;
    const std::vector<BufferView> &views = in ? inputs : outputs;
    if (r.index >= views.size()) // unreachable for a verified program
      return graph + " binds " + (in ? "input " : "output ") + std::to_string(r.index) +
             " but only " + std::to_string(views.size()) + " were passed";
    std::string why = checkOne(r, views[r.index]);
    if (!why.empty())
      return graph + (in ? " input " : " output ") + std::to_string(r.index) + ": " + why;
  }
  return "";
}

} // namespace trnc
