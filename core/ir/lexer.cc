#include "ir/lexer.h"

#include <cstdio>
#include <optional>
#include <utility>

namespace drtriton::ir_internal {
namespace {

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; }

std::string Quote(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

char Closer(char open) { return open == '(' ? ')' : ']'; }

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Result<LexedText> Run() {
    while (pos_ < text_.size()) {
      if (at_line_start_) {
        StartLine();
        continue;
      }
      if (auto error = LexOne()) return *error;
    }
    if (!brackets_.empty()) {
      const Bracket& open = brackets_.back();
      return MakeError(std::string("syntax error: '") + open.c + "' is never closed", open.line);
    }
    // The last line that exists: a final '\n' ends a line rather than starting one.
    const bool ends_with_newline = !text_.empty() && text_.back() == '\n';
    out_.last_line = ends_with_newline && line_ > 1 ? line_ - 1 : line_;
    return std::move(out_);
  }

 private:
  struct Bracket {
    char c;
    int line;
  };

  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  // Skips indentation; blank and comment-only lines produce no logical line.
  void StartLine() {
    at_line_start_ = false;
    const size_t begin = pos_;
    while (IsSpace(Peek())) ++pos_;
    const char c = Peek();
    if (c == '\n' || c == '#' || pos_ >= text_.size()) return;
    LogicalLine line;
    line.line = line_;
    line.indented = pos_ > begin;
    const size_t end = text_.find('\n', pos_);
    line.source = std::string(text_.substr(pos_, end == std::string_view::npos ? end : end - pos_));
    if (line.source.size() > 80) line.source = line.source.substr(0, 77) + "...";
    out_.lines.push_back(std::move(line));
  }

  void Push(TokenKind kind, std::string text) {
    out_.lines.back().tokens.push_back(Token{kind, std::move(text), line_});
  }

  std::optional<Error> LexOne() {
    const char c = Peek();
    if (c == '\n') {
      ++pos_;
      ++line_;
      // Inside brackets the logical line goes on (Python's implicit line joining).
      at_line_start_ = brackets_.empty();
      return std::nullopt;
    }
    if (IsSpace(c)) return ++pos_, std::nullopt;
    if (c == '#') {
      while (pos_ < text_.size() && Peek() != '\n') ++pos_;
      return std::nullopt;
    }
    if (IsNameStart(c)) return LexName();
    if (IsDigit(c) || (c == '.' && IsDigit(Peek(1)))) return LexNumber();
    if (c == '\'' || c == '"') return LexString();
    if (c == '(' || c == '[') {
      brackets_.push_back({c, line_});
    } else if (c == ')' || c == ']') {
      if (brackets_.empty()) return MakeError("syntax error: unmatched " + Quote(c), line_);
      if (Closer(brackets_.back().c) != c) {
        return MakeError("syntax error: " + Quote(c) + " does not close '" + brackets_.back().c +
                             "' from line " + std::to_string(brackets_.back().line),
                         line_);
      }
      brackets_.pop_back();
    } else if (c != ',' && c != '=' && c != ':' && c != '.' && c != '-') {
      return MakeError("syntax error: unexpected character " + Quote(c), line_);
    }
    ++pos_;
    Push(TokenKind::kPunct, std::string(1, c));
    return std::nullopt;
  }

  std::optional<Error> LexName() {
    const size_t begin = pos_;
    while (IsNameChar(Peek())) ++pos_;
    Push(TokenKind::kName, std::string(text_.substr(begin, pos_ - begin)));
    return std::nullopt;
  }

  // 12, 1.5, .5, 2., 1e-05.  A number glued to letters ("3x") is a bad literal, as in Python.
  std::optional<Error> LexNumber() {
    const size_t begin = pos_;
    bool is_float = false;
    while (IsDigit(Peek())) ++pos_;
    if (Peek() == '.') {
      is_float = true;
      ++pos_;
      while (IsDigit(Peek())) ++pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      size_t k = 1;
      if (Peek(k) == '+' || Peek(k) == '-') ++k;
      if (IsDigit(Peek(k))) {
        is_float = true;
        pos_ += k;
        while (IsDigit(Peek())) ++pos_;
      }
    }
    if (IsNameChar(Peek()) || Peek() == '.') {
      while (IsNameChar(Peek()) || Peek() == '.') ++pos_;
      return MakeError("bad literal '" + std::string(text_.substr(begin, pos_ - begin)) + "'",
                       line_);
    }
    Push(is_float ? TokenKind::kFloat : TokenKind::kInt,
         std::string(text_.substr(begin, pos_ - begin)));
    return std::nullopt;
  }

  // '...' or "..." on one line.  No escapes: attribute strings are short words ('tanh').
  std::optional<Error> LexString() {
    const char quote = Peek();
    const size_t begin = ++pos_;
    while (pos_ < text_.size() && Peek() != quote && Peek() != '\n') {
      if (Peek() == '\\') {
        return MakeError("bad literal: escape sequences in strings are not supported", line_);
      }
      ++pos_;
    }
    if (Peek() != quote) return MakeError("bad literal: unterminated string", line_);
    // AttrValue::ToPython prints '...', so a quote inside would not read back.
    if (text_.substr(begin, pos_ - begin).find_first_of("'\"") != std::string_view::npos) {
      return MakeError("bad literal: strings may not contain quotes", line_);
    }
    Push(TokenKind::kString, std::string(text_.substr(begin, pos_ - begin)));
    ++pos_;
    return std::nullopt;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  bool at_line_start_ = true;
  std::vector<Bracket> brackets_;
  LexedText out_;
};

}  // namespace

Result<LexedText> Lex(std::string_view text) { return Lexer(text).Run(); }

}  // namespace drtriton::ir_internal
