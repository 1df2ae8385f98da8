#include <gtest/gtest.h>

#include <string>

#include "ir/program.h"

namespace drtriton {
namespace {

constexpr const char* kCanonical =
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "def fused_operator(x0, x1):\n"
    "    t0 = torch.add(x0, x1)\n"
    "    t1 = torch.relu(t0)\n"
    "    t2 = torch.sum(t1, 1)\n"
    "    return t2\n"
    "\n"
    "def get_inputs():\n"
    "    return [torch.randn(4, 8), torch.rand(1, 8)]\n";

TEST(ParserTest, CanonicalTextRoundTripsByteForByte) {
  auto program = Parse(kCanonical);
  ASSERT_TRUE(program.ok()) << program.error().ToString();
  EXPECT_EQ(program.value().Print(), kCanonical);
}

}  // namespace
}  // namespace drtriton
