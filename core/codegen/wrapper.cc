// Assembles the candidate file: imports, the kernels, and `triton_fused_operator`, which
// checks its inputs, allocates every stored intermediate and output, and launches the
// kernels in order (checks -> allocate -> grid -> launch, as the Triton tutorials do).
#include "codegen/wrapper.h"

#include <algorithm>
#include <string>
#include <vector>

#include "catalog/lowering.h"
#include "codegen/amplify.h"
#include "codegen/emitters.h"
#include "codegen/fusion.h"

namespace drtriton::codegen {

std::string ShapeTuple(const Dims& dims) {
  if (dims.size() == 1) return "(" + dims[0] + ",)";
  return "(" + Join(dims, ", ") + ")";
}

std::string ShapeTuple(const Shape& shape) { return ShapeTuple(LiteralDims(shape)); }

namespace {

std::string TorchDtype(const std::string& dtype) { return "torch." + dtype; }

// The dtype of a stored value.  One candidate serves every precision mode
// (verify/precision.py): its kernels load float32, bfloat16 or float16, compute in float32 and
// store at the pointer's dtype (tl.store converts).  Floating values take the inputs' dtype,
// as PyTorch's would: the outputs (`float_dtype`, WriteFloatDtype), and the intermediates
// between kernels, which eager PyTorch rounds too (`inter_dtype`, WriteInterDtype; in bf16
// half the bytes: L2 20's transposed convolution writes 268 MB and reads them back instead of
// 537).  An intermediate whose rounding could fail the verifier stays float32 (amplify.h,
// RoundingSensitiveValues: a conv output before a group norm).  Index and mask tensors keep
// their dtype.
std::string StoredDtype(const Program& p, ValueId v, const std::vector<bool>& sensitive) {
  if (p.value(v).dtype != "float32") return TorchDtype(p.value(v).dtype);
  if (IsOutput(p, v)) return "float_dtype";
  return sensitive[v.index] ? "torch.float32" : "inter_dtype";
}

// `float_dtype`: the first floating input's dtype, float32 where there is none.
void WriteFloatDtype(PythonWriter& w, const Program& p) {
  for (ValueId in : p.inputs()) {
    if (p.value(in).dtype != "float32") continue;
    w.Line("float_dtype = " + p.value(in).name + ".dtype");
    return;
  }
  w.Line("float_dtype = torch.float32");
}

// `inter_dtype`: float_dtype, but float32 for bf16 off the GPU: Triton's interpreter
// truncates a float32 value it stores to bf16 (toward zero, fp_downcast_rounding="rtne"
// too), and that bias adds up in the next kernel's sums: a linear's output truncated before
// another linear over its 48 features put 315 of 1,280 outputs past 1e-2 (1.4 off at 165).
void WriteInterDtype(PythonWriter& w, const std::string& device) {
  if (device == "'cuda'") {
    w.Line("inter_dtype = float_dtype");
    return;
  }
  w.Line("inter_dtype = float_dtype if " + device +
         ".type == \"cuda\" or float_dtype != torch.bfloat16 else torch.float32");
}

// Whether a launch allocates an intermediate in `inter_dtype` (StoredDtype).
bool RoundsAnIntermediate(const Program& p, const std::vector<Launch>& launches,
                          const std::vector<bool>& sensitive) {
  for (const auto& l : launches)
    for (ValueId v : {l.output, l.also_allocates})
      if (v.valid() && StoredDtype(p, v, sensitive) == "inter_dtype") return true;
  return false;
}

// Generic-shape mode: the sizes come from the inputs (`x0_s0, x0_s1 = x0.shape`; the
// unpacking checks the rank), and a dim that is 1 in the program must stay 1 because the
// kernels read it as a broadcast dim.
void WriteSizes(PythonWriter& w, const Program& p) {
  for (ValueId in : p.inputs()) {
    const Value& v = p.value(in);
    if (v.shape.empty()) continue;
    std::vector<std::string> names;
    for (size_t d = 0; d < v.shape.size(); ++d) names.push_back(SizeName(v.name, d));
    w.Line(ShapeTuple(names) + " = " + v.name + ".shape");
    for (size_t d = 0; d < v.shape.size(); ++d)
      if (v.shape[d] == 1)
        w.Line("assert " + names[d] + " == 1, \"" + v.name + " must have size 1 in dim " +
               std::to_string(d) + "\"");
  }
}

void WriteChecks(PythonWriter& w, const Program& p) {
  for (ValueId in : p.inputs()) {
    const Value& v = p.value(in);
    w.Line("assert tuple(" + v.name + ".shape) == " + ShapeTuple(v.shape) + ", \"" + v.name +
           " must have shape " + ShapeTuple(v.shape) + "\"");
  }
}

// The wrapper variable a kernel's DOT_PRECISION reads: `dot_precision` for the first GPU
// precision the candidate uses, `dot_precision_<name>` for any other.
std::string DotPrecisionVar(const std::vector<std::string>& used, const std::string& precision) {
  return !used.empty() && used[0] == precision ? "dot_precision" : "dot_precision_" + precision;
}

// The precision a split kernel's tl.dot runs at, chosen at launch (emit_contraction.cc's
// WriteDotStep has a branch for each):
// - half inputs (bf16, fp16 modes): the operands' own dtype on the tensor cores, fp32 sums;
// - float32 where PyTorch may use TF32 (`torch.get_float32_matmul_precision()` is not
//   "highest": the tf32 mode sets it for the whole worker, baselines included, and a user's
//   `torch.set_float32_matmul_precision("high")` does too): "tf32", as torch.matmul would;
// - strict float32: the split (`gpu`, heuristics.h kDefaultDotPrecision).
// Triton runs kernels on CPU tensors only in its interpreter (TRITON_INTERPRET=1), whose tl.dot
// refuses bf16x3 and bf16x6 and computes bf16 operands wrongly, so there a bf16 or float32
// product is "ieee" on float32 operands (fp16 ones it computes right).  The static rules keep
// `os`, `triton.knobs` and `torch.backends` out of candidates: the inputs' device and dtype and
// the matmul precision are what tell the cases apart.
void WriteSplitChoice(PythonWriter& w, const std::string& var, const std::string& gpu,
                      const std::string& device) {
  w.Line(var + " = \"" + gpu +
         "\" if torch.get_float32_matmul_precision() == \"highest\" else \"tf32\"");
  w.Open("if float_dtype == torch.bfloat16 or float_dtype == torch.float16:");
  w.Line(var + " = \"bf16\" if float_dtype == torch.bfloat16 else \"fp16\"");
  w.Dedent();
  if (device == "'cuda'") return;
  w.Open("if " + device + ".type != \"cuda\" and " + var + " != \"fp16\":");
  w.Line(var + " = \"ieee\"");
  w.Dedent();
}

// One choice per GPU precision the kernels use: "ieee" stays "ieee" (float32 operands, the
// FMA units: M or N under 16); a split is chosen at launch (WriteSplitChoice).
std::vector<std::string> WriteDotPrecisions(PythonWriter& w, const std::vector<Launch>& launches,
                                            const std::string& device) {
  std::vector<std::string> used;
  auto write = [&](const std::string& p) {
    if (p.empty() || std::find(used.begin(), used.end(), p) != used.end()) return;
    used.push_back(p);
    if (p == "ieee")
      w.Line(DotPrecisionVar(used, p) + " = \"ieee\"");
    else
      WriteSplitChoice(w, DotPrecisionVar(used, p), p, device);
  };
  for (const auto& l : launches) {
    for (const auto& k : l.kernel.before) write(k.dot_precision);  // split-K's partial kernel
    write(l.kernel.dot_precision);
  }
  return used;
}

// The launch, under `if k.guard:` when the kernel has one.
// `libdevice`: the kernel declares lowering::kLibdeviceFlag, true on a CUDA input.
void WriteLaunch(PythonWriter& w, const EmittedKernel& k, const std::vector<std::string>& dots,
                 const std::string& device, bool libdevice) {
  std::vector<std::string> args = k.call_args;
  for (const auto& c : k.constexprs) args.push_back(c);
  if (libdevice)
    args.push_back(std::string(lowering::kLibdeviceFlag) + "=" + device + ".type == \"cuda\"");
  if (!k.dot_precision.empty())
    args.push_back("DOT_PRECISION=" + DotPrecisionVar(dots, k.dot_precision));
  if (!k.tuned) {  // an autotuned kernel's come with its chosen tile
    args.push_back("num_warps=" + std::to_string(k.launch.num_warps));
    if (k.launch.num_stages > 1)
      args.push_back("num_stages=" + std::to_string(k.launch.num_stages));
  }
  if (k.launch.max_registers > 0)
    args.push_back("maxnreg=" + std::to_string(k.launch.max_registers));
  if (k.launch.cooperative) args.push_back("launch_cooperative_grid=True");
  if (!k.guard.empty()) w.Open("if " + k.guard + ":");
  w.Line(k.name + "[" + k.grid + "](");
  w.Line("    " + Join(args, ", ") + ",");
  w.Line(")");
  if (!k.guard.empty()) w.Dedent();
}

// `output = source.view(shape)`, converted where the two are stored in different dtypes (a
// float32 intermediate under a bf16 output off the GPU: torch rounds it to nearest, as
// PyTorch's own output was rounded).
void WriteView(PythonWriter& f, const Program& p, const Launch& l, const SizeSyms* syms,
               const std::vector<bool>& sensitive) {
  const std::string shape =
      syms ? ShapeTuple(syms->values[l.output.index]) : ShapeTuple(p.value(l.output).shape);
  const std::string dtype = StoredDtype(p, l.output, sensitive);
  const std::string source_dtype = StoredDtype(p, l.view_of, sensitive);
  f.Line(p.value(l.output).name + " = " + p.value(l.view_of).name + ".view(" + shape + ")" +
         (dtype == source_dtype ? "" : ".to(" + dtype + ")"));
}

}  // namespace

std::string InputDevice(const Program& program) {
  return program.inputs().empty() ? "'cuda'" : program.value(program.inputs()[0]).name + ".device";
}

std::string ScratchAllocation(const Program& program, const std::string& name, int64_t floats) {
  return name + " = torch.empty((" + IntLiteral(floats) + ",), device=" + InputDevice(program) +
         ", dtype=torch.float32)";
}

std::string StridedAllocation(const Program& program, const Dims& shape, const Dims& strides,
                              const std::string& like) {
  return "torch.empty_strided(" + ShapeTuple(shape) + ", " + ShapeTuple(strides) +
         ", device=" + InputDevice(program) + ", dtype=" + like + ".dtype)";
}

std::string ContiguityCheck(const Program& program, const std::vector<ValueId>& flat,
                            const std::vector<ValueId>& fresh) {
  std::vector<std::string> checks;
  for (ValueId v : flat)
    if (std::find(fresh.begin(), fresh.end(), v) == fresh.end())
      checks.push_back(program.value(v).name + ".is_contiguous()");
  return Join(checks, " and ");
}

void SetContiguityFlag(EmittedKernel& kernel, const std::string& check) {
  kernel.setup.push_back("contig = " + check);
  kernel.constexprs.push_back("CONTIG=contig");
}

std::string ProgramId(int axis, bool wide) {
  const std::string id = "tl.program_id(" + std::to_string(axis) + ")";
  return wide ? id + ".to(tl.int64)" : id;
}

std::string Arange(const std::string& block, bool wide) {
  const std::string r = "tl.arange(0, " + block + ")";
  return wide ? r + ".to(tl.int64)" : r;
}

bool UsesLibdeviceFlag(const std::string& text) {
  return text.find(lowering::kLibdeviceFlag) != std::string::npos;
}

std::string KernelText(const std::string& name, const std::string& comment,
                       const KernelParams& params, const std::vector<std::string>& constexprs,
                       const std::string& body) {
  std::vector<std::string> all = params.params();
  for (const auto& c : constexprs) all.push_back(c + ": tl.constexpr");
  if (UsesLibdeviceFlag(body))
    all.push_back(std::string(lowering::kLibdeviceFlag) + ": tl.constexpr");
  std::string text = "@triton.jit\ndef " + name + "(" + Join(all, ", ") + "):\n";
  text += "    # " + comment + "\n";
  return text + body;
}

void OpenLoop(PythonWriter& w, const std::string& var, const std::string& bound,
              const std::string& step, const std::string& start) {
  if (IsLiteral(bound)) {
    w.Open("for " + var + " in tl.range(" + start + ", " + bound + ", " + step + "):");
    return;
  }
  w.Line(var + " = pid * 0" + (start == "0" ? "" : " + " + start));
  w.Open("while " + var + " < " + bound + ":");
}

void CloseLoop(PythonWriter& w, const std::string& var, const std::string& bound,
               const std::string& step) {
  if (!IsLiteral(bound)) w.Line(var + " += " + step);
  w.Dedent();
}

std::string BlocksOf(const std::string& count, const std::string& block) {
  if (IsLiteral(count) && IsLiteral(block))
    return IntLiteral(CeilDiv(std::stoll(count), std::stoll(block)));
  return "triton.cdiv(" + count + ", " + block + ")";
}

std::string Grid1D(const std::string& count, const std::string& block) {
  return "(" + BlocksOf(count, block) + ",)";
}

std::string AssembleCandidate(const Program& p, const std::vector<Launch>& launches,
                              const SizeSyms* syms) {
  std::string out = "import torch\nimport triton\nimport triton.language as tl\n";
  bool descriptors = false;
  for (const auto& l : launches) {
    descriptors = descriptors || l.kernel.tensor_descriptors;
    for (const auto& k : l.kernel.before) descriptors = descriptors || k.tensor_descriptors;
  }
  if (descriptors) out += "from triton.tools.tensor_descriptor import TensorDescriptor\n";
  std::string kernels;
  std::vector<std::string> flagged;  // the kernels that declare kLibdeviceFlag, by name
  const auto write = [&](const EmittedKernel& k) {
    kernels += "\n\n" + k.text;
    if (UsesLibdeviceFlag(k.text)) flagged.push_back(k.name);
  };
  for (const auto& l : launches) {
    if (l.view_of.valid()) continue;
    for (const auto& k : l.kernel.before)  // "" = another launch of a kernel written below
      if (!k.text.empty()) write(k);
    write(l.kernel);
  }
  if (!flagged.empty()) out += "from triton.language.extra import libdevice\n";
  out += kernels;

  std::vector<std::string> names;
  for (ValueId in : p.inputs()) names.push_back(p.value(in).name);
  PythonWriter f;
  f.Blank();
  f.Blank();
  f.Open("def triton_fused_operator(" + Join(names, ", ") + "):");
  if (syms) {
    WriteSizes(f, p);
    for (const auto& line : syms->derived) f.Line(line);
  } else
    WriteChecks(f, p);
  const std::string device = InputDevice(p);
  WriteFloatDtype(f, p);
  const std::vector<std::string> dots = WriteDotPrecisions(f, launches, device);
  const auto launch = [&](const EmittedKernel& k) {
    const bool libdevice = std::find(flagged.begin(), flagged.end(), k.name) != flagged.end();
    WriteLaunch(f, k, dots, device, libdevice);
  };
  const std::vector<bool> sensitive = RoundingSensitiveValues(p);
  if (RoundsAnIntermediate(p, launches, sensitive)) WriteInterDtype(f, device);
  const auto allocate = [&](ValueId v, const std::string& unless) {
    const std::string shape =
        syms ? ShapeTuple(syms->values[v.index]) : ShapeTuple(p.value(v).shape);
    f.Line(p.value(v).name + " = torch.empty(" + shape + ", device=" + device +
           ", dtype=" + StoredDtype(p, v, sensitive) + ")" +
           (unless.empty() ? "" : " if not " + unless + " else None"));
  };
  for (const auto& l : launches) {
    if (l.view_of.valid()) {
      WriteView(f, p, l, syms, sensitive);
      continue;
    }
    const std::string& unless = l.kernel.computes_pool_when;
    if (!l.allocated && unless.empty()) allocate(l.output, "");
    if (l.also_allocates.valid()) allocate(l.also_allocates, "");
    for (const auto& k : l.kernel.before) {
      if (!k.for_precision.empty())
        f.Open("if " + DotPrecisionVar(dots, k.for_precision) + " == \"" + k.for_precision +
               "\":");
      for (const auto& line : k.setup) f.Line(line);
      launch(k);
      if (k.for_precision.empty()) continue;
      f.Dedent();
      f.Open("else:");
      for (const auto& line : k.otherwise) f.Line(line);
      f.Dedent();
    }
    if (!unless.empty()) allocate(l.output, unless);
    for (const auto& line : l.kernel.setup) f.Line(line);
    launch(l.kernel);
  }
  std::vector<std::string> outs;
  for (ValueId o : p.outputs()) outs.push_back(p.value(o).name);
  f.Line("return " + Join(outs, ", "));
  return out + f.Take();
}

}  // namespace drtriton::codegen
