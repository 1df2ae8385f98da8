// Binds the program IR.  parse() returns plain data (or an error tuple) and the Python
// layer (drtriton/program.py) wraps it in a typed object and a ProgramError.
#include <string>

#include <nanobind/stl/string.h>

#include "bindings.h"
#include "catalog/catalog.h"
#include "convert.h"
#include "ir/build.h"
#include "ir/program.h"

namespace nb = nanobind;

namespace drtriton {
namespace {

nb::dict ProgramToDict(const Program& program) {
  nb::dict d;
  d["source"] = program.Print();
  nb::list ops;
  for (const auto& name : program.op_names()) ops.append(name);
  d["ops"] = ops;
  d["level"] = program.level();
  nb::dict shapes, dtypes;
  for (const auto& v : program.values()) {
    shapes[v.name.c_str()] = ShapeToPython(v.shape);
    dtypes[v.name.c_str()] = v.dtype;
  }
  d["shapes"] = shapes;
  d["dtypes"] = dtypes;
  nb::list inputs, outputs;
  for (ValueId id : program.inputs()) inputs.append(program.value(id).name);
  for (ValueId id : program.outputs()) outputs.append(program.value(id).name);
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  nb::list nodes;
  for (const auto& n : program.nodes()) {
    nb::dict node;
    node["op"] = GetOp(n.op).name;
    node["result"] = program.value(n.result).name;
    nb::list operands;
    for (ValueId t : n.tensors)
      operands.append(t.valid() ? nb::object(nb::str(program.value(t).name.c_str()))
                                : nb::object(nb::none()));
    node["inputs"] = operands;
    nb::list attrs;
    for (const auto& a : n.attrs) attrs.append(AttrToPython(a));
    node["attrs"] = attrs;
    node["line"] = n.line;
    nodes.append(node);
  }
  d["nodes"] = nodes;
  d["flops"] = program.flops();
  d["bytes"] = program.bytes();
  d["unfused_bytes"] = program.unfused_bytes();
  d["canonical_key"] = CanonicalKey(program);
  return d;
}

nb::tuple ErrorTuple(const Error& e) { return nb::make_tuple(false, e.message, e.line); }

}  // namespace

void BindIR(nb::module_& m) {
  m.def(
      "parse",
      [](const std::string& text) -> nb::tuple {
        Result<Program> program = Parse(text);
        if (!program) return ErrorTuple(program.error());
        return nb::make_tuple(true, ProgramToDict(program.value()), 0);
      },
      nb::arg("text"),
      "Parse a functional task. Returns (True, program_dict, 0) or (False, message, line).");
  m.def(
      "canonical_source",
      [](const std::string& text) -> nb::tuple {
        Result<Program> program = Parse(text);
        if (!program) return ErrorTuple(program.error());
        const Program& p = program.value();
        const Program named = CanonicallyNamed(p);
        nb::dict renamed;  // each value's name -> its canonical name
        for (size_t i = 0; i < p.inputs().size(); ++i)
          renamed[p.value(p.inputs()[i]).name.c_str()] = named.value(named.inputs()[i]).name;
        for (size_t i = 0; i < p.nodes().size(); ++i)
          renamed[p.value(p.nodes()[i].result).name.c_str()] =
              named.value(named.nodes()[i].result).name;
        return nb::make_tuple(true, named.Print(), renamed);
      },
      nb::arg("text"),
      "The task with its values named by role and order (inputs x0.., results t0..): "
      "(True, text, {old name: new name}) or (False, message, line).");
  m.def(
      "example_program",
      [](const std::string& name) -> nb::tuple {
        const OpId op = FindOp(name);
        if (op == kInvalidOp) return ErrorTuple(MakeError("unknown operator '" + name + "'"));
        Result<Program> program = SingleOpProgram(op);
        if (!program) return ErrorTuple(program.error());
        return nb::make_tuple(true, program.value().Print(), 0);
      },
      nb::arg("name"),
      "A one-operator program built from the catalog example: (True, text, 0) or an error.");
}

}  // namespace drtriton
