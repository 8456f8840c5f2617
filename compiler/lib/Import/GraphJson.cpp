//===- GraphJson.cpp - read and validate the graph JSON document ----------===//
//
// Every failure becomes one precise "invalid_graph" message naming the JSON
// path of the offending field; nlohmann exceptions are caught here and never
// escape.
//
//===----------------------------------------------------------------------===//
#include "GraphJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

using json = nlohmann::json;

namespace trnc::import {

static const char *const kKnownDtypes[] = {
    "float32",       "bfloat16",      "float16",         "float64",
    "int64",         "int32",         "int16",           "int8",
    "uint8",         "uint16",        "uint32",          "uint64",
    "bool",          "complex32",     "complex64",       "complex128",
    "float8_e4m3fn", "float8_e5m2",   "float8_e4m3fnuz", "float8_e5m2fnuz"};

bool isKnownDtype(std::string_view dtype) {
  return std::find(std::begin(kKnownDtypes), std::end(kKnownDtypes), dtype) !=
         std::end(kKnownDtypes);
}

bool isSupportedDtype(std::string_view dtype) {
  return dtype == "float32" || dtype == "bfloat16" || dtype == "float16" ||
         dtype == "int32" || dtype == "int64" || dtype == "bool";
}

std::string Arg::describe() const {
  switch (kind) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    return boolean ? "the bool True" : "the bool False";
  case Kind::Int:
    return "the int " + std::to_string(integer);
  case Kind::Float:
    return "the float " + std::to_string(number);
  case Kind::Str:
    return "the string '" + text + "'";
  case Kind::DType:
    return "the dtype " + text;
  case Kind::Device:
    return "the device " + text;
  case Kind::Enum:
    return text;
  case Kind::List:
    return "a list of " + std::to_string(list.size());
  case Kind::Ref:
    return "the tensor '" + text + "'";
  }
  return "?";
}

namespace {

/// What a node reference may point at.
struct Producer {
  size_t numResults = 1;
  bool multiResult = false, hasMeta = true;
  std::vector<bool> isTensor; // per result
};

class Reader {
public:
  explicit Reader(Graph &graph) : graph(graph) {}

  bool read(const json &doc);
  std::string error;

private:
  bool fail(const std::string &path, const std::string &what) {
    if (error.empty())
      error = path.empty() ? what : path + ": " + what;
    return false;
  }
  const json *field(const json &obj, const std::string &path, const char *key,
                    bool required = true);
  bool readString(const json &obj, const std::string &path, const char *key,
                  std::string &out);
  bool readDims(const json &value, const std::string &path,
                std::vector<int64_t> &out);
  bool readMeta(const json &value, const std::string &path, TensorMeta &out);
  bool readNodeMeta(const json &value, const std::string &path, Node &node);
  bool readLoc(const json &value, const std::string &path, Node &node);
  bool readArg(const json &value, const std::string &path, Arg &out);
  bool readRef(const json &value, const std::string &path, std::string &node,
               int64_t &index, bool onlyRefKeys = true);
  bool defineName(const std::string &name, const std::string &path,
                  Producer producer);

  Graph &graph;
  std::unordered_map<std::string, Producer> defined;
  std::unordered_map<std::string, size_t> allNodeNames; // name -> position
};

} // namespace

const json *Reader::field(const json &obj, const std::string &path,
                          const char *key, bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required)
      fail(path, std::string("missing field '") + key + "'");
    return nullptr;
  }
  return &*it;
}

bool Reader::readString(const json &obj, const std::string &path,
                        const char *key, std::string &out) {
  const json *v = field(obj, path, key);
  if (!v)
    return false;
  if (!v->is_string())
    return fail(path + "." + key, "expected a string, got " +
                                      std::string(v->type_name()));
  out = v->get<std::string>();
  return true;
}

bool Reader::readDims(const json &value, const std::string &path,
                      std::vector<int64_t> &out) {
  if (!value.is_array())
    return fail(path, "expected an array of non-negative integers");
  for (size_t i = 0; i < value.size(); ++i) {
    const json &d = value[i];
    if (!d.is_number_integer() ||
        (d.is_number_unsigned() &&
         d.get<uint64_t>() >
             static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) ||
        d.get<int64_t>() < 0)
      return fail(path + "[" + std::to_string(i) + "]",
                  "expected a non-negative integer, got " + d.dump() +
                      " (shapes are static: trace with dynamic=False)");
    out.push_back(d.get<int64_t>());
  }
  return true;
}

bool Reader::readMeta(const json &value, const std::string &path,
                      TensorMeta &out) {
  if (!value.is_object())
    return fail(path, "expected tensor metadata {shape, stride, dtype}");
  const json *shape = field(value, path, "shape");
  const json *stride = field(value, path, "stride");
  if (!shape || !stride || !readDims(*shape, path + ".shape", out.shape) ||
      !readDims(*stride, path + ".stride", out.stride) ||
      !readString(value, path, "dtype", out.dtype))
    return false;
  if (out.shape.size() != out.stride.size())
    return fail(path, "shape has rank " + std::to_string(out.shape.size()) +
                          " but stride has " +
                          std::to_string(out.stride.size()) + " entries");
  if (!isKnownDtype(out.dtype))
    return fail(path + ".dtype", "unknown dtype '" + out.dtype + "'");
  return true;
}

bool Reader::readNodeMeta(const json &value, const std::string &path,
                          Node &node) {
  if (value.is_null()) {
    node.hasMeta = false;
    return true;
  }
  node.hasMeta = true;
  if (value.is_array()) {
    node.multiResult = true;
    for (size_t i = 0; i < value.size(); ++i) {
      if (value[i].is_null()) {
        node.results.emplace_back();
        continue;
      }
      TensorMeta meta;
      if (!readMeta(value[i], path + "[" + std::to_string(i) + "]", meta))
        return false;
      node.results.emplace_back(std::move(meta));
    }
    return true;
  }
  TensorMeta meta;
  if (!readMeta(value, path, meta))
    return false;
  node.results.emplace_back(std::move(meta));
  return true;
}

bool Reader::readLoc(const json &value, const std::string &path, Node &node) {
  if (value.is_null())
    return true;
  if (!value.is_object())
    return fail(path, "expected {file, line, code} or null");
  SourceLoc loc;
  if (!readString(value, path, "file", loc.file))
    return false;
  const json *line = field(value, path, "line");
  if (!line)
    return false;
  if (!line->is_number_integer() || line->get<int64_t>() < 0 ||
      line->get<int64_t>() > std::numeric_limits<unsigned>::max())
    return fail(path + ".line", "expected a non-negative integer");
  loc.line = line->get<unsigned>();
  if (const json *code = field(value, path, "code", /*required=*/false)) {
    if (!code->is_string() && !code->is_null())
      return fail(path + ".code", "expected a string");
    if (code->is_string())
      loc.code = code->get<std::string>();
  }
  node.loc = std::move(loc);
  return true;
}

bool Reader::readRef(const json &value, const std::string &path,
                     std::string &node, int64_t &index, bool onlyRefKeys) {
  const json &name = value["node"];
  if (!name.is_string())
    return fail(path + ".node", "expected a node name string");
  node = name.get<std::string>();
  index = -1;
  if (auto it = value.find("index"); it != value.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0)
      return fail(path + ".index", "expected a non-negative integer");
    index = it->get<int64_t>();
  }
  for (auto it = value.begin(); onlyRefKeys && it != value.end(); ++it)
    if (it.key() != "node" && it.key() != "index")
      return fail(path, "unexpected key '" + it.key() + "' in a node reference");

  auto def = defined.find(node);
  if (def == defined.end()) {
    if (allNodeNames.count(node))
      return fail(path, "node '" + node +
                            "' is used before it is defined (nodes must be "
                            "in topological order)");
    return fail(path, "unknown node reference '" + node + "'");
  }
  const Producer &p = def->second;
  if (!p.hasMeta)
    return true; // nothing to check against; the importer reports it
  if (index < 0 && p.multiResult)
    return fail(path, "node '" + node + "' has " +
                          std::to_string(p.numResults) +
                          " results; reference one with \"index\"");
  if (index >= 0 && !p.multiResult)
    return fail(path, "node '" + node +
                          "' has a single result; \"index\" is not allowed");
  if (index >= static_cast<int64_t>(p.numResults))
    return fail(path, "index " + std::to_string(index) + " out of range: node '" +
                          node + "' has " + std::to_string(p.numResults) +
                          " results");
  if (index >= 0 && !p.isTensor[index])
    return fail(path, "result " + std::to_string(index) + " of node '" + node +
                          "' is not a tensor");
  return true;
}

bool Reader::readArg(const json &value, const std::string &path, Arg &out) {
  using Kind = Arg::Kind;
  switch (value.type()) {
  case json::value_t::null:
    out.kind = Kind::None;
    return true;
  case json::value_t::boolean:
    out.kind = Kind::Bool;
    out.boolean = value.get<bool>();
    return true;
  case json::value_t::number_unsigned:
    if (value.get<uint64_t>() >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail(path, "integer " + value.dump() + " does not fit in int64");
    [[fallthrough]];
  case json::value_t::number_integer:
    out.kind = Kind::Int;
    out.integer = value.get<int64_t>();
    return true;
  case json::value_t::number_float:
    out.kind = Kind::Float;
    out.number = value.get<double>();
    return true;
  case json::value_t::array:
    out.kind = Kind::List;
    out.list.resize(value.size());
    for (size_t i = 0; i < value.size(); ++i)
      if (!readArg(value[i], path + "[" + std::to_string(i) + "]", out.list[i]))
        return false;
    return true;
  case json::value_t::object:
    break;
  default:
    return fail(path, "unexpected " + std::string(value.type_name()) +
                          " (strings are encoded as {\"str\": ...})");
  }

  if (value.contains("node")) {
    out.kind = Kind::Ref;
    return readRef(value, path, out.text, out.index);
  }
  if (value.size() != 1 || !value.begin()->is_string())
    return fail(path, "unknown argument encoding " + value.dump());
  const std::string &key = value.begin().key();
  std::string payload = value.begin()->get<std::string>();
  if (key == "float") {
    out.kind = Kind::Float;
    if (payload == "inf")
      out.number = std::numeric_limits<double>::infinity();
    else if (payload == "-inf")
      out.number = -std::numeric_limits<double>::infinity();
    else if (payload == "nan")
      out.number = std::numeric_limits<double>::quiet_NaN();
    else
      return fail(path, "{\"float\": \"" + payload +
                            "\"}: expected \"inf\", \"-inf\" or \"nan\"");
    return true;
  }
  if (key == "dtype" && !isKnownDtype(payload))
    return fail(path, "unknown dtype '" + payload + "'");
  static const std::pair<const char *, Kind> kTagged[] = {
      {"dtype", Kind::DType},
      {"device", Kind::Device},
      {"enum", Kind::Enum},
      {"str", Kind::Str}};
  for (const auto &[tag, kind] : kTagged)
    if (key == tag) {
      out.kind = kind;
      out.text = std::move(payload);
      return true;
    }
  return fail(path, "unknown argument encoding " + value.dump());
}

bool Reader::defineName(const std::string &name, const std::string &path,
                        Producer producer) {
  if (name.empty())
    return fail(path + ".name", "empty name");
  if (!defined.emplace(name, std::move(producer)).second)
    return fail(path + ".name", "duplicate name '" + name + "'");
  return true;
}

bool Reader::read(const json &doc) {
  if (!doc.is_object())
    return fail("", "the document is not a JSON object");

  // Schema and version first: a document of another version may differ in
  // every other field.
  const json *schema = field(doc, "", "schema");
  const json *version = field(doc, "", "version");
  if (!schema || !version)
    return false;
  if (!schema->is_string() || *schema != kSchemaName ||
      !version->is_number_integer() || *version != kSchemaVersion)
    return fail("", "graph JSON has schema '" +
                        (schema->is_string() ? schema->get<std::string>()
                                             : schema->dump()) +
                        "' version " + version->dump() +
                        "; this trnc reads schema '" +
                        kSchemaName + "' version " +
                        std::to_string(kSchemaVersion));

  if (!readString(doc, "", "name", graph.name))
    return false;
  const json *inputs = field(doc, "", "inputs");
  const json *nodes = field(doc, "", "nodes");
  const json *outputs = field(doc, "", "outputs");
  if (!inputs || !nodes || !outputs)
    return false;
  for (const auto &[key, v] : {std::pair<const char *, const json *>{
                                   "inputs", inputs},
                               {"nodes", nodes},
                               {"outputs", outputs}})
    if (!v->is_array())
      return fail(key, "expected an array");

  for (size_t i = 0; i < inputs->size(); ++i) {
    std::string path = "inputs[" + std::to_string(i) + "]";
    GraphInput in;
    if (!readString((*inputs)[i], path, "name", in.name) ||
        !readMeta((*inputs)[i], path, in.meta) ||
        !defineName(in.name, path, Producer{1, false, true, {true}}))
      return false;
    if (const json *m = field((*inputs)[i], path, "max_abs", /*required=*/false)) {
      if (!m->is_number() || !(m->get<double>() >= 0) ||
          !std::isfinite(m->get<double>()))
        return fail(path + ".max_abs", "expected a finite number >= 0");
      in.maxAbs = m->get<double>();
    }
    if (const json *e = field((*inputs)[i], path, "fp32_exact", /*required=*/false)) {
      if (!e->is_boolean())
        return fail(path + ".fp32_exact", "expected a boolean");
      in.fp32Exact = e->get<bool>();
    }
    graph.inputs.push_back(std::move(in));
  }

  for (size_t i = 0; i < nodes->size(); ++i)
    if ((*nodes)[i].is_object() && (*nodes)[i].contains("name") &&
        (*nodes)[i]["name"].is_string())
      allNodeNames.emplace((*nodes)[i]["name"].get<std::string>(), i);

  for (size_t i = 0; i < nodes->size(); ++i) {
    const json &n = (*nodes)[i];
    std::string path = "nodes[" + std::to_string(i) + "]";
    if (!n.is_object())
      return fail(path, "expected a node object");
    Node node;
    if (!readString(n, path, "name", node.name) ||
        !readString(n, path, "target", node.target))
      return false;
    const json *args = field(n, path, "args");
    const json *meta = field(n, path, "meta");
    if (!args || !meta)
      return false;
    if (!args->is_array())
      return fail(path + ".args", "expected an array");
    node.args.resize(args->size());
    for (size_t a = 0; a < args->size(); ++a)
      if (!readArg((*args)[a], path + ".args[" + std::to_string(a) + "]",
                   node.args[a]))
        return false;
    if (const json *kwargs = field(n, path, "kwargs", /*required=*/false)) {
      if (!kwargs->is_object())
        return fail(path + ".kwargs", "expected an object");
      for (auto it = kwargs->begin(); it != kwargs->end(); ++it) {
        Arg arg;
        if (!readArg(*it, path + ".kwargs." + it.key(), arg))
          return false;
        node.kwargs.emplace_back(it.key(), std::move(arg));
      }
    }
    if (!readNodeMeta(*meta, path + ".meta", node))
      return false;
    if (const json *loc = field(n, path, "loc", /*required=*/false))
      if (!readLoc(*loc, path + ".loc", node))
        return false;

    Producer producer;
    producer.hasMeta = !meta->is_null();
    producer.multiResult = node.multiResult;
    producer.numResults = node.results.size();
    for (const auto &r : node.results)
      producer.isTensor.push_back(r.has_value());
    if (!defineName(node.name, path, std::move(producer)))
      return false;
    graph.nodes.push_back(std::move(node));
  }

  for (size_t i = 0; i < outputs->size(); ++i) {
    const json &o = (*outputs)[i];
    std::string path = "outputs[" + std::to_string(i) + "]";
    GraphOutput out;
    if (!o.is_object() || !o.contains("node"))
      return fail(path, "expected {node, shape, stride, dtype}");
    if (!readRef(o, path, out.node, out.index, /*onlyRefKeys=*/false) ||
        !readMeta(o, path, out.meta))
      return false;
    graph.outputs.push_back(std::move(out));
  }
  return true;
}

bool readGraph(std::string_view text, Graph &graph, std::string &error) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception &e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line
    // 3, column 5: ..."; keep the part after the bracketed id.
    std::string what = e.what();
    size_t close = what.find("] ");
    error = "malformed graph JSON: " +
            (close == std::string::npos ? what : what.substr(close + 2));
    return false;
  }
  return readGraph(doc, graph, error);
}

bool readGraph(const json &doc, Graph &graph, std::string &error) {
  Reader reader(graph);
  try {
    if (reader.read(doc))
      return true;
    error = reader.error;
  } catch (const json::exception &e) {
    error = std::string("invalid graph JSON: ") + e.what();
  }
  return false;
}

} // namespace trnc::import
