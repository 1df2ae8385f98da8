// Test helper: a functional task from a `fused_operator` body and its get_inputs() list.
// Header-only and for *_test.cc files only (it needs GoogleTest).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "ir/program.h"

namespace drtriton {

inline Program MustParse(const std::string& body, const std::string& inputs) {
  const std::string text = "import torch\nimport torch.nn.functional as F\n\n" + body +
                           "\ndef get_inputs():\n    return [" + inputs + "]\n";
  auto p = Parse(text);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().ToString()) << "\n" << text;
  return p.ok() ? std::move(p).value() : Program{};
}

}  // namespace drtriton
