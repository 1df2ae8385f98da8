// Deterministic fuzzing of Parse(): valid task texts mutated at the character, token and
// line level.  Parse must answer ok or an error with a line (never crash, assert or hang;
// the test build runs under ASan/UBSan, which turn memory errors and overflow into
// failures), and whatever parses must round-trip through Print exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/build.h"
#include "ir/program.h"

namespace drtriton {
namespace {

// SplitMix64: the same sequence on every platform and standard library, unlike
// std::uniform_int_distribution, so a failing case number reproduces everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds = {
      "import torch\n"
      "import torch.nn.functional as F\n"
      "\n"
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = torch.add(x0, x1)\n"
      "    t1 = torch.relu(t0)\n"
      "    t2 = torch.sum(t1, -1, True)\n"
      "    t3 = torch.add(t2, x2)\n"
      "    return t1, t3\n"
      "\n"
      "def get_inputs():\n"
      "    return [torch.randn(2, 3, 4), torch.rand(3, 1), torch.randn(1, 1, 1)]\n",
      // Tolerated spellings: keywords, comments, wrapped lists, tuple sizes, float literals.
      "import torch\n"
      "from torch import nn  # for nn\n"
      "def get_inputs():\n"
      "    return [\n"
      "        torch.randn((8, 16)),\n"
      "        torch.rand([16]),\n"
      "    ]\n"
      "def fused_operator(a, b):\n"
      "    c = torch.sum(input=a, dim=0, keepdim=False)\n"
      "    d = torch.add(c, other=b)\n"
      "    return (d, c)\n",
  };
  // One single-operator program per catalog entry, so new operators get fuzzed too.
  for (OpId id = 0; id < static_cast<OpId>(Catalog().size()); ++id) {
    auto program = SingleOpProgram(id);
    if (program.ok()) seeds.push_back(program.value().Print());
  }
  return seeds;
}

// Pieces a mutation may insert: the format's own tokens and characters, plus hostile bytes.
const std::vector<std::string>& Pieces() {
  // clang-format off
  static const std::vector<std::string> kPieces = {
      "(", ")", "[", "]", ",", "=", ":", ".", "-", "'", "\"", "#", "\n", " ", "    ", "\t", "\r",
      "0", "1", "-1", "9999999999999999999999", "1e999", "1e-320", ".5", "2.", "None", "True",
      "False", "float('inf')", "float('nan')", "x0", "t0", "t9", "torch", "F", "return",
      "def", "import", "torch.relu(", "torch.randn(", "torch.sum(", "dim=", "keepdim=",
      "[1, 2]", "(3,)", "'tanh'", "\\", "+", "\xff", std::string(1, '\0'), "get_inputs",
      "fused_operator", "torch.nn.functional.", "1 << 62", "4294967296", "65536, 65536"};
  // clang-format on
  return kPieces;
}

// Token-ish spans: runs of identifier characters, runs of digits, or single characters.
std::vector<std::pair<size_t, size_t>> Spans(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> spans;
  auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
  };
  for (size_t i = 0; i < text.size();) {
    size_t j = i + 1;
    if (word(text[i]))
      while (j < text.size() && word(text[j])) ++j;
    spans.emplace_back(i, j - i);
    i = j;
  }
  return spans;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size() - 1;
    lines.push_back(text.substr(begin, end - begin + 1));
    begin = end + 1;
  }
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l;
  return text;
}

void MutateOnce(std::string& text, Rng& rng) {
  if (text.empty()) {
    text = Pieces()[rng.Below(Pieces().size())];
    return;
  }
  const size_t at = rng.Below(text.size());
  switch (rng.Below(11)) {
    case 0:
      text.erase(at, 1);
      break;
    case 1:
      text.insert(at, 1, text[at]);
      break;
    case 2:
      if (at + 1 < text.size()) std::swap(text[at], text[at + 1]);
      break;
    case 3:
      text.insert(at, Pieces()[rng.Below(Pieces().size())]);
      break;
    case 4:
      text.resize(at);
      break;
    case 5:
    case 6:
    case 7: {
      const auto spans = Spans(text);
      const auto [a, alen] = spans[rng.Below(spans.size())];
      const auto [b, blen] = spans[rng.Below(spans.size())];
      const std::string ta = text.substr(a, alen), tb = text.substr(b, blen);
      if (rng.Below(3) == 0) {  // delete a token
        text.erase(a, alen);
      } else if (rng.Below(2) == 0) {  // duplicate a token elsewhere
        text.insert(b, ta);
      } else if (a + alen <= b) {  // swap two tokens
        text.replace(b, blen, ta);
        text.replace(a, alen, tb);
      }
      break;
    }
    default: {
      auto lines = Lines(text);
      const size_t i = rng.Below(lines.size()), j = rng.Below(lines.size());
      switch (rng.Below(3)) {
        case 0:
          lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        case 1:
          lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(j), lines[i]);
          break;
        default:
          std::swap(lines[i], lines[j]);
          break;
      }
      text = Join(lines);
      break;
    }
  }
}

TEST(ParserFuzzTest, MutatedTasksParseOrFailCleanlyAndRoundTrip) {
  const std::vector<std::string> seeds = Seeds();
  ASSERT_GE(seeds.size(), 3u);
  Rng rng(20260331);
  constexpr int kCases = 20000;
  int parsed = 0, rejected = 0;
  for (int n = 0; n < kCases; ++n) {
    std::string text = seeds[rng.Below(seeds.size())];
    const size_t mutations = 1 + rng.Below(4);
    for (size_t m = 0; m < mutations; ++m) MutateOnce(text, rng);

    auto program = Parse(text);
    if (!program.ok()) {
      ++rejected;
      EXPECT_GE(program.error().line, 1) << "case " << n << ": " << program.error().message;
      EXPECT_FALSE(program.error().message.empty()) << "case " << n;
      continue;
    }
    ++parsed;
    const std::string printed = program.value().Print();
    auto again = Parse(printed);
    ASSERT_TRUE(again.ok()) << "case " << n
                            << ": printed text does not parse: " << again.error().ToString()
                            << "\n--- input\n"
                            << text << "\n--- printed\n"
                            << printed;
    ASSERT_EQ(again.value().Print(), printed) << "case " << n << "\n--- input\n" << text;
    EXPECT_EQ(CanonicalKey(again.value()), CanonicalKey(program.value())) << "case " << n;
  }
  // Both outcomes must be well represented, or the mutations are too gentle or too harsh.
  EXPECT_GT(parsed, kCases / 50);
  EXPECT_GT(rejected, kCases / 2);
}

TEST(ParserFuzzTest, RandomBytesNeverCrash) {
  Rng rng(7);
  for (int n = 0; n < 3000; ++n) {
    std::string text(rng.Below(200), '\0');
    for (char& c : text) c = static_cast<char>(rng.Below(256));
    auto program = Parse(text);
    EXPECT_FALSE(program.ok());
  }
}

TEST(ParserFuzzTest, DeepNestingAndLongInputsStayCheap) {
  const std::string open(100000, '(');
  EXPECT_FALSE(Parse("def fused_operator(" + open).ok());
  EXPECT_FALSE(Parse("x = " + open + std::string(100000, ')')).ok());
  std::string many = "import torch\n";
  for (int k = 0; k < 20000; ++k) many += "import torch\n";
  EXPECT_FALSE(Parse(many).ok());
}

}  // namespace
}  // namespace drtriton
