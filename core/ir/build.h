// Programs built from the catalog rather than parsed: one-operator programs (the seed of
// per-operator tests) and a name-blind key for removing duplicate programs.
#pragma once

#include <string>

#include "catalog/catalog.h"
#include "ir/program.h"
#include "util/result.h"

namespace drtriton {

// `t0 = op(x0, x1, ...)` with the inputs and attributes of the catalog entry's example.
// Inputs come from torch.rand where the operator needs positive values (Param::positive or
// the kPositiveInput trait), else torch.randn; an optional tensor whose example shape is
// empty is passed as None.
Result<Program> SingleOpProgram(OpId op);

// Equal for two programs that differ only in the names of their values (same inputs in the
// same order, same operators in the same order, same wiring, attributes and outputs).
std::string CanonicalKey(const Program& program);

// The program with its values named by role and order (inputs x0.., node results t0..,
// CanonicalKey's numbering): two programs with one key print the same, so a fragment that
// recurs under other names (each step of an unrolled RNN, each identical block of a ResNet
// stage) gets the same candidates and its verdicts are judged once (search.py VerdictCache).
Program CanonicallyNamed(const Program& program);

// True when every node is one the synthesizer could have sampled (catalog InSynthDomain:
// attributes inside the sampled ranges and choices).  Parse accepts more (stride 4,
// negative_slope 0.05, as real models use); the synthesizer and its tests want this.
bool InSynthDomain(const Program& program);

}  // namespace drtriton
