// Binds the template Triton generator (core/codegen).  Programs come in as task text;
// errors come back as (False, message, line) tuples like `parse`, so that the Python layer
// can turn them into UserError or a skipped record.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "codegen/codegen.h"
#include "codegen/heuristics.h"
#include "ir/program.h"

namespace nb = nanobind;

namespace drtriton {
namespace {

nb::tuple ErrorTuple(const Error& e) { return nb::make_tuple(false, e.message, e.line); }

}  // namespace

void BindCodegen(nb::module_& m) {
  m.def(
      "codegen_dot_precision",
      []() { return std::string(codegen::DotPrecisionName(codegen::kDefaultDotPrecision)); },
      "The tl.dot precision of the teacher's contractions on a GPU (heuristics.h, "
      "kDefaultDotPrecision; the CPU interpreter runs 'ieee').");
  m.def(
      "codegen_contraction_config",
      [](int64_t m_size, int64_t n, int64_t k, int64_t batch, int variant,
         const std::string& precision) -> nb::dict {
        codegen::DotPrecision p = codegen::kDefaultDotPrecision;
        if (!precision.empty() && !codegen::DotPrecisionFromName(precision, &p))
          throw nb::value_error(("unknown dot precision: " + precision).c_str());
        const codegen::ContractionConfig c =
            codegen::ChooseContraction(m_size, n, k, batch, variant, p);
        nb::dict d;
        d["block_m"] = c.block_m;
        d["block_n"] = c.block_n;
        d["block_k"] = c.block_k;
        d["group_m"] = c.group_m;
        d["chunk_k"] = c.chunk_k;
        d["split_k"] = c.split_k;
        d["k_slice"] = c.k_slice;
        d["narrow"] = c.narrow;
        d["precision"] = std::string(codegen::DotPrecisionName(c.precision));
        d["num_warps"] = c.launch.num_warps;
        d["num_stages"] = c.launch.num_stages;
        return d;
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("batch") = 1, nb::arg("variant") = 0,
      nb::arg("precision") = "",
      "The teacher's tiles, K chunking, split-K, narrow path and GPU tl.dot precision for an "
      "(m, k) x (k, n) contraction (core/codegen/heuristics.h); precision '' = the default split.");
  m.def(
      "codegen_emit",
      [](const std::string& text, int variant, bool fuse_epilogue, bool generic_shapes,
         bool column_stats) -> nb::tuple {
        Result<Program> program = Parse(text);
        if (!program) return ErrorTuple(program.error());
        codegen::CodegenOptions options;
        options.variant = variant;
        options.fuse_epilogue = fuse_epilogue;
        options.generic_shapes = generic_shapes;
        options.column_stats = column_stats;
        Result<std::string> candidate = codegen::EmitCandidate(program.value(), options);
        if (!candidate) return ErrorTuple(candidate.error());
        return nb::make_tuple(true, candidate.value(), 0);
      },
      nb::arg("text"), nb::arg("variant") = 0, nb::arg("fuse_epilogue") = true,
      nb::arg("generic_shapes") = false, nb::arg("column_stats") = false,
      "Emit a Triton candidate for a functional task: (True, text, 0) or (False, message, line). "
      "generic_shapes: sizes read at run time (see codegen_generic_unsupported); column_stats: "
      "training batch norms' statistics from the contractions' tiles.");
  m.def(
      "codegen_variants",
      [](const std::string& text, int k, bool generic_shapes,
         const std::vector<std::string>& amplified) -> std::vector<std::string> {
        Result<Program> program = Parse(text);
        if (!program) throw nb::value_error(program.error().ToString().c_str());
        return codegen::EmitVariants(program.value(), k, generic_shapes, amplified);
      },
      nb::arg("text"), nb::arg("k"), nb::arg("generic_shapes") = false,
      nb::arg("amplified") = std::vector<std::string>{},
      "Up to k distinct candidates (block sizes, fusion splits); [] when unsupported. "
      "amplified: output names whose rounding an operator outside the task magnifies.");
  m.def(
      "codegen_unsupported",
      [](const std::string& text) -> std::vector<std::string> {
        Result<Program> program = Parse(text);
        if (!program) throw nb::value_error(program.error().ToString().c_str());
        return codegen::UnsupportedOps(program.value());
      },
      nb::arg("text"), "Operators (or configurations) of the task the generator cannot emit.");
  m.def(
      "codegen_generic_unsupported",
      [](const std::string& text) -> std::vector<std::string> {
        Result<Program> program = Parse(text);
        if (!program) throw nb::value_error(program.error().ToString().c_str());
        return codegen::GenericUnsupportedOps(program.value());
      },
      nb::arg("text"),
      "Why generic_shapes would fall back to the specialized candidate ([] = it applies).");
}

}  // namespace drtriton
