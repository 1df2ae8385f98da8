// Lexer for the functional task format: text -> logical lines of tokens.  A logical line
// is Python's: physical lines joined while a bracket is open (get_inputs may wrap).
// Internal to ir/; the parser is its only client.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace drtriton::ir_internal {

enum class TokenKind { kName, kInt, kFloat, kString, kPunct };

struct Token {
  TokenKind kind = TokenKind::kPunct;
  std::string text;  // kString: the contents without quotes
  int line = 0;
};

struct LogicalLine {
  int line = 0;           // physical line where it starts
  bool indented = false;  // starts with whitespace: a function body line
  std::string source;     // its text (first physical line), for error messages
  std::vector<Token> tokens;
};

struct LexedText {
  std::vector<LogicalLine> lines;
  int last_line = 1;  // number of physical lines, for "missing ..." errors
};

// Blank lines and comments vanish.  Fails on characters outside the format, unterminated
// strings, malformed numbers and unbalanced brackets.
Result<LexedText> Lex(std::string_view text);

}  // namespace drtriton::ir_internal
