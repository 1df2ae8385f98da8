// Assembles the candidate file: imports, the kernels, and `triton_fused_operator`, which
// checks its inputs, allocates every stored intermediate and output, and launches the
// kernels in order (checks -> allocate -> grid -> launch, as the Triton tutorials do).
#include "codegen/wrapper.h"

#include <string>
#include <vector>

#include "codegen/emitters.h"

namespace drtriton::codegen {
namespace {

std::string ShapeTuple(const Shape& shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(IntLiteral(d));
  if (dims.size() == 1) return "(" + dims[0] + ",)";
  return "(" + Join(dims, ", ") + ")";
}

std::string TorchDtype(const std::string& dtype) { return "torch." + dtype; }

void WriteChecks(PythonWriter& w, const Program& p) {
  for (ValueId in : p.inputs()) {
    const Value& v = p.value(in);
    w.Line("assert tuple(" + v.name + ".shape) == " + ShapeTuple(v.shape) + ", \"" + v.name +
           " must have shape " + ShapeTuple(v.shape) + "\"");
  }
}

void WriteLaunch(PythonWriter& w, const EmittedKernel& k) {
  std::vector<std::string> args = k.call_args;
  for (const auto& c : k.constexprs) args.push_back(c);
  args.push_back("num_warps=" + std::to_string(k.launch.num_warps));
  if (k.launch.num_stages > 1) args.push_back("num_stages=" + std::to_string(k.launch.num_stages));
  w.Line(k.name + "[" + k.grid + "](");
  w.Line("    " + Join(args, ", ") + ",");
  w.Line(")");
}

}  // namespace

std::string ProgramId(int axis, bool wide) {
  const std::string id = "tl.program_id(" + std::to_string(axis) + ")";
  return wide ? id + ".to(tl.int64)" : id;
}

std::string Arange(const std::string& block, bool wide) {
  const std::string r = "tl.arange(0, " + block + ")";
  return wide ? r + ".to(tl.int64)" : r;
}

std::string KernelText(const std::string& name, const std::string& comment,
                       const KernelParams& params, const std::vector<std::string>& constexprs,
                       const std::string& body) {
  std::vector<std::string> all = params.params();
  for (const auto& c : constexprs) all.push_back(c + ": tl.constexpr");
  std::string text = "@triton.jit\ndef " + name + "(" + Join(all, ", ") + "):\n";
  text += "    # " + comment + "\n";
  return text + body;
}

std::string AssembleCandidate(const Program& p, const std::vector<Launch>& launches) {
  std::string out = "import torch\nimport triton\nimport triton.language as tl\n";
  for (const auto& l : launches) out += "\n\n" + l.kernel.text;

  std::vector<std::string> names;
  for (ValueId in : p.inputs()) names.push_back(p.value(in).name);
  PythonWriter f;
  f.Blank();
  f.Blank();
  f.Open("def triton_fused_operator(" + Join(names, ", ") + "):");
  WriteChecks(f, p);
  const std::string device = p.inputs().empty() ? "'cuda'" : names[0] + ".device";
  for (const auto& l : launches) {
    const Value& v = p.value(l.output);
    f.Line(v.name + " = torch.empty(" + ShapeTuple(v.shape) + ", device=" + device +
           ", dtype=" + TorchDtype(v.dtype) + ")");
    WriteLaunch(f, l.kernel);
  }
  std::vector<std::string> outs;
  for (ValueId o : p.outputs()) outs.push_back(p.value(o).name);
  f.Line("return " + Join(outs, ", "));
  return out + f.Take();
}

}  // namespace drtriton::codegen
