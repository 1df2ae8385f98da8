// Checks on emitted kernel text shared by the codegen tests (FileCheck style).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drtriton::codegen {

// Occurrences of `what` in `text`, overlapping ones included.
inline int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Every `checks` fragment occurs in `text`, each after the previous one.
inline void ExpectInOrder(const std::string& text, const std::vector<std::string>& checks) {
  size_t pos = 0;
  for (const auto& c : checks) {
    const size_t at = text.find(c, pos);
    ASSERT_NE(at, std::string::npos) << "missing (in order): " << c << "\n--- in ---\n" << text;
    pos = at + c.size();
  }
}

}  // namespace drtriton::codegen
