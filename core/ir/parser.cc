// Parse(): the functional task format back into a Program.  Three stages, one file each:
// lexer.cc (text -> logical lines of tokens), this file (lines -> statements -> Program) and
// binder.cc (a call's arguments -> an operator's parameters).  This is not a Python parser:
// it accepts the flat format Print() writes plus the spellings people and torch.export use,
// and says in plain words what else it found.
#include <charconv>
#include <cstdlib>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/binder.h"
#include "ir/lexer.h"
#include "ir/program.h"

namespace drtriton {
namespace ir_internal {
namespace {

std::string Describe(const Token* token) {
  if (!token) return "end of line";
  return "'" + token->text + "'";
}

// A read position in one logical line.  Errors carry the line of the token they point at,
// which matters for get_inputs lists that span several physical lines.
class Cursor {
 public:
  explicit Cursor(const LogicalLine& line) : line_(line) {}

  const Token* Peek(size_t ahead = 0) const {
    return pos_ + ahead < line_.tokens.size() ? &line_.tokens[pos_ + ahead] : nullptr;
  }
  const Token& Next() { return line_.tokens[pos_++]; }  // only after Peek() != nullptr
  bool AtEnd() const { return pos_ >= line_.tokens.size(); }
  size_t pos() const { return pos_; }

  bool IsPunct(char c, size_t ahead = 0) const {
    const Token* t = Peek(ahead);
    return t && t->kind == TokenKind::kPunct && t->text[0] == c;
  }
  bool IsName(std::string_view name) const {
    const Token* t = Peek();
    return t && t->kind == TokenKind::kName && t->text == name;
  }
  bool IsKind(TokenKind kind, size_t ahead = 0) const {
    const Token* t = Peek(ahead);
    return t && t->kind == kind;
  }
  bool AcceptPunct(char c) {
    if (!IsPunct(c)) return false;
    ++pos_;
    return true;
  }
  bool AcceptName(std::string_view name) {
    if (!IsName(name)) return false;
    ++pos_;
    return true;
  }

  int line() const {
    if (const Token* t = Peek()) return t->line;
    return line_.tokens.empty() ? line_.line : line_.tokens.back().line;
  }

  Error SyntaxError(const std::string& expected) const {
    return MakeError("syntax error: expected " + expected + " but found " + Describe(Peek()) +
                         " in '" + line_.source + "'",
                     line());
  }
  std::optional<Error> ExpectPunct(char c) {
    if (AcceptPunct(c)) return std::nullopt;
    return SyntaxError(std::string("'") + c + "'");
  }
  std::optional<Error> ExpectEnd() {
    if (AtEnd()) return std::nullopt;
    return SyntaxError("end of line");
  }
  Result<std::string> ExpectName(const std::string& what) {
    if (!IsKind(TokenKind::kName)) return SyntaxError(what);
    return Next().text;
  }
  // a.b.c as one string.
  Result<std::string> ExpectDottedName(const std::string& what) {
    auto name = ExpectName(what);
    if (!name) return name;
    std::string dotted = name.value();
    while (AcceptPunct('.')) {
      auto part = ExpectName("a name after '.'");
      if (!part) return part;
      dotted += "." + part.value();
    }
    return dotted;
  }
  // The tokens from `begin` to here, spaced roughly as Python prints them.
  std::string TextSince(size_t begin) const {
    std::string text;
    for (size_t k = begin; k < pos_ && k < line_.tokens.size(); ++k) {
      const Token& t = line_.tokens[k];
      if (t.kind == TokenKind::kString) {
        text += "'" + t.text + "'";
      } else {
        text += t.text;
        if (t.text == ",") text += " ";
      }
    }
    return text;
  }

 private:
  const LogicalLine& line_;
  size_t pos_ = 0;
};

// --- Literals ---------------------------------------------------------------------------

Result<int64_t> ParseInt(const std::string& text, int line) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return MakeError("bad literal '" + text + "': not a 64-bit integer", line);
  }
  return value;
}

// strtod, not from_chars: it reads 1e999 as inf and 1e-320 as a denormal, as Python does.
double ParseFloat(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

// float('inf'), float('-inf'), float('nan'): how AttrValue::ToPython spells non-finite floats.
Result<AttrValue> ParseFloatCall(Cursor& c) {
  c.Next();  // float
  if (auto e = c.ExpectPunct('(')) return *e;
  if (!c.IsKind(TokenKind::kString)) return c.SyntaxError("'inf', '-inf' or 'nan'");
  const std::string word = c.Next().text;
  if (auto e = c.ExpectPunct(')')) return *e;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (word == "inf") return AttrValue::Float(kInf);
  if (word == "-inf") return AttrValue::Float(-kInf);
  if (word == "nan") return AttrValue::Float(std::numeric_limits<double>::quiet_NaN());
  return MakeError("bad literal float('" + word + "')", c.line());
}

Result<AttrValue> ParseNumber(Cursor& c) {
  const bool negative = c.AcceptPunct('-');
  if (c.IsKind(TokenKind::kInt)) {
    const Token& t = c.Next();
    auto v = ParseInt((negative ? "-" : "") + t.text, t.line);
    if (!v) return v.error();
    return AttrValue::Int(v.value());
  }
  if (c.IsKind(TokenKind::kFloat)) {
    const double v = ParseFloat(c.Next().text);
    return AttrValue::Float(negative ? -v : v);
  }
  return c.SyntaxError("a number");
}

// [1, 2], (1, 2), (3,), [] -> an int list; (3) is just 3, as in Python.
Result<AttrValue> ParseIntList(Cursor& c) {
  const char open = c.Next().text[0];
  const char close = open == '(' ? ')' : ']';
  std::vector<int64_t> ints;
  bool saw_comma = false;
  while (!c.AcceptPunct(close)) {
    if (!c.IsKind(TokenKind::kInt) && !(c.IsPunct('-') && c.IsKind(TokenKind::kInt, 1))) {
      if (c.IsKind(TokenKind::kFloat) || c.IsKind(TokenKind::kString) ||
          c.IsKind(TokenKind::kName)) {
        return MakeError("bad literal " + Describe(c.Peek()) + ": lists may hold only integers",
                         c.line());
      }
      return c.SyntaxError("an integer");
    }
    auto v = ParseNumber(c);
    if (!v) return v;
    ints.push_back(v.value().i);
    if (c.AcceptPunct(',')) {
      saw_comma = true;
    } else if (!c.IsPunct(close)) {
      return c.SyntaxError(std::string("',' or '") + close + "'");
    }
  }
  if (open == '(' && ints.size() == 1 && !saw_comma) return AttrValue::Int(ints[0]);
  return AttrValue::IntList(std::move(ints));
}

// --- Calls --------------------------------------------------------------------------------

struct CallExpr {
  std::string callee;
  std::vector<ArgExpr> args;
  int line = 0;
};

// A literal: None True False 3 -1 0.5 'tanh' [1, 2] (3,) float('inf').
Result<AttrValue> ParseLiteral(Cursor& c) {
  const Token* t = c.Peek();
  if (!t) return c.SyntaxError("an argument");
  if (t->kind == TokenKind::kName) {
    if (t->text == "float" && c.IsPunct('(', 1)) return ParseFloatCall(c);
    const std::string word = c.Next().text;
    if (word == "None") return AttrValue::None();
    return AttrValue::Bool(word == "True");  // the caller only sends True, False, None here
  }
  if (t->kind == TokenKind::kString) return AttrValue::String(c.Next().text);
  if (t->kind == TokenKind::kPunct && (t->text == "[" || t->text == "(")) return ParseIntList(c);
  if (t->kind == TokenKind::kInt || t->kind == TokenKind::kFloat || t->text == "-") {
    return ParseNumber(c);
  }
  return c.SyntaxError("an argument");
}

bool IsLiteralStart(const Cursor& c) {
  const Token* t = c.Peek();
  if (!t || t->kind != TokenKind::kName) return true;
  return t->text == "None" || t->text == "True" || t->text == "False" ||
         (t->text == "float" && c.IsPunct('(', 1));
}

// A value name or a literal.
Result<ArgExpr> ParseValue(Cursor& c) {
  ArgExpr arg;
  const size_t begin = c.pos();
  if (IsLiteralStart(c)) {
    auto literal = ParseLiteral(c);
    if (!literal) return literal.error();
    arg.literal = std::move(literal).value();
    arg.text = c.TextSince(begin);
    return arg;
  }
  // Dotted names (torch.float16) come through so that the binder can say they are not
  // supported as arguments.
  auto name = c.ExpectDottedName("a name");
  if (!name) return name.error();
  if (c.IsPunct('(')) {
    return MakeError(
        "nested call " + name.value() + "(...): write one operator per line, naming each result",
        c.line());
  }
  arg.is_name = true;
  arg.name = name.value();
  arg.text = arg.name;
  return arg;
}

Result<ArgExpr> ParseArg(Cursor& c) {
  std::string keyword;
  if (c.IsKind(TokenKind::kName) && c.IsPunct('=', 1)) {
    keyword = c.Next().text;
    c.Next();  // =
  }
  auto arg = ParseValue(c);
  if (arg) arg.value().keyword = std::move(keyword);
  return arg;
}

// callee(arg, ..., kw=arg, ...)
Result<CallExpr> ParseCall(Cursor& c) {
  CallExpr call;
  call.line = c.line();
  auto callee = c.ExpectDottedName("an operator such as torch.relu");
  if (!callee) return callee.error();
  call.callee = callee.value();
  if (auto e = c.ExpectPunct('(')) return *e;
  while (!c.AcceptPunct(')')) {
    auto arg = ParseArg(c);
    if (!arg) return arg.error();
    call.args.push_back(std::move(arg).value());
    if (!c.AcceptPunct(',') && !c.IsPunct(')')) return c.SyntaxError("',' or ')'");
  }
  return call;
}

// Any spelling FindOp knows, written as Python would reach it (so never a bare "relu",
// which Python would not find, or "sum", which is Python's builtin).
OpId ResolveOp(const std::string& callee) {
  if (callee.find('.') == std::string::npos) return kInvalidOp;
  OpId op = FindOp(callee);
  if (op == kInvalidOp && callee.rfind("nn.functional.", 0) == 0) op = FindOp("torch." + callee);
  return op;
}

// --- Top level: imports and the two functions -------------------------------------------------

struct FunctionText {
  bool defined = false;
  int line = 0;
  std::vector<std::string> params;
  std::vector<const LogicalLine*> body;
};

struct Functions {
  FunctionText fused;   // fused_operator
  FunctionText inputs;  // get_inputs
};

std::optional<Error> ParseImport(Cursor& c) {
  const bool is_from = c.IsName("from");
  c.Next();
  auto module = c.ExpectDottedName("a module name");
  if (!module) return module.error();
  std::string imported = module.value();
  if (is_from) {
    if (!c.AcceptName("import")) return c.SyntaxError("'import'");
    auto name = c.ExpectName("a name to import");
    if (!name) return name.error();
    imported += "." + name.value();
  }
  std::string alias;
  if (c.AcceptName("as")) {
    auto name = c.ExpectName("an alias");
    if (!name) return name.error();
    alias = name.value();
  }
  if (auto e = c.ExpectEnd()) return e;
  // What the task format uses: torch, torch.nn.functional as F, torch.nn as nn.
  const bool ok = (imported == "torch" && alias.empty()) ||
                  (imported == "torch.nn" && (alias.empty() || alias == "nn")) ||
                  (imported == "torch.nn.functional" && (alias.empty() || alias == "F"));
  if (!ok) {
    return MakeError("unsupported import of '" + imported + (alias.empty() ? "" : " as " + alias) +
                         "': a task imports only torch, torch.nn (as nn) and "
                         "torch.nn.functional (as F)",
                     c.line());
  }
  return std::nullopt;
}

// def name(a, b, c):
std::optional<Error> ParseDef(Cursor& c, Functions& functions, FunctionText** current) {
  const int line = c.line();
  c.Next();  // def
  auto name = c.ExpectName("a function name");
  if (!name) return name.error();
  FunctionText* fn = nullptr;
  if (name.value() == "fused_operator") fn = &functions.fused;
  if (name.value() == "get_inputs") fn = &functions.inputs;
  if (!fn) {
    return MakeError("unexpected function '" + name.value() +
                         "': a task defines only fused_operator and get_inputs",
                     line);
  }
  if (fn->defined) {
    return MakeError("redefinition of " + name.value() + " (first defined on line " +
                         std::to_string(fn->line) + ")",
                     line);
  }
  if (auto e = c.ExpectPunct('(')) return e;
  while (!c.AcceptPunct(')')) {
    auto param = c.ExpectName("a parameter name");
    if (!param) return param.error();
    for (const std::string& p : fn->params) {
      if (p == param.value()) return MakeError("redefinition of parameter '" + p + "'", line);
    }
    if (!IsValidValueName(param.value())) {
      return MakeError("'" + param.value() +
                           "' cannot name a parameter (it is a keyword or "
                           "shadows torch, F, nn)",
                       line);
    }
    fn->params.push_back(param.value());
    if (!c.AcceptPunct(',') && !c.IsPunct(')')) return c.SyntaxError("',' or ')'");
  }
  if (auto e = c.ExpectPunct(':')) return e;
  if (auto e = c.ExpectEnd()) return e;
  fn->defined = true;
  fn->line = line;
  *current = fn;
  return std::nullopt;
}

// Sorts lines into imports (checked and dropped) and the bodies of the two functions.
Result<Functions> SplitFunctions(const LexedText& lexed) {
  Functions functions;
  FunctionText* current = nullptr;
  for (const LogicalLine& line : lexed.lines) {
    if (line.indented) {
      if (!current) return MakeError("unexpected indentation: '" + line.source + "'", line.line);
      current->body.push_back(&line);
      continue;
    }
    current = nullptr;
    Cursor c(line);
    std::optional<Error> error;
    if (c.IsName("import") || c.IsName("from")) {
      error = ParseImport(c);
    } else if (c.IsName("def")) {
      error = ParseDef(c, functions, &current);
    } else if (c.IsName("return")) {
      error = MakeError("'return' outside a function", line.line);
    } else {
      error = MakeError("unexpected statement '" + line.source +
                            "' at top level: a task holds imports, fused_operator and get_inputs",
                        line.line);
    }
    if (error) return *error;
  }
  if (!functions.fused.defined) {
    return MakeError("missing 'def fused_operator(...)'", lexed.last_line);
  }
  if (!functions.inputs.defined) return MakeError("missing 'def get_inputs()'", lexed.last_line);
  return functions;
}

// --- get_inputs ---------------------------------------------------------------------------------

struct InputSpec {
  OpId create = kInvalidOp;
  Shape shape;
  IndexRange range;  // torch.randint
  bool boolean = false;  // torch.randint(0, 2, size, dtype=torch.bool)
  int line = 0;
};

// torch.randint(high, size) or torch.randint(low, high, size), the size one tuple or list
// (or size=...): class indices, int64; with dtype=torch.bool (and (0, 2)) a bool mask.
Result<InputSpec> ToIndexInputSpec(const CallExpr& call, InputSpec spec) {
  std::vector<int64_t> bounds;
  bool sized = false;
  for (const ArgExpr& arg : call.args) {
    const bool list = !arg.is_name && arg.literal.type == AttrType::kIntList;
    const bool integer = !arg.is_name && arg.literal.type == AttrType::kInt;
    if (arg.keyword == "dtype") {
      if (!arg.is_name || arg.name != "torch.bool")
        return MakeError(call.callee + " takes dtype=torch.bool or no dtype, got " + arg.text,
                         call.line);
      spec.boolean = true;
      continue;
    }
    if (!arg.keyword.empty() && arg.keyword != "size")
      return MakeError("unknown keyword '" + arg.keyword + "' for " + call.callee, call.line);
    if (list && !sized) {
      spec.shape = arg.literal.ints;
      sized = true;
    } else if (integer && arg.keyword.empty() && !sized) {
      bounds.push_back(arg.literal.i);
    } else {
      return MakeError(call.callee + " takes (low, high, size) with integers and one tuple, got " +
                           arg.text,
                       call.line);
    }
  }
  if (!sized || bounds.empty() || bounds.size() > 2)
    return MakeError(call.callee + " takes (high, size) or (low, high, size)", call.line);
  spec.range = bounds.size() == 1 ? IndexRange{0, bounds[0]} : IndexRange{bounds[0], bounds[1]};
  return spec;
}

// torch.randn(2, 3), torch.rand((2, 3)), torch.randn([2, 3]), torch.randn(size=(2, 3)).
Result<InputSpec> ToInputSpec(const CallExpr& call) {
  InputSpec spec;
  spec.line = call.line;
  spec.create = ResolveOp(call.callee);
  if (spec.create == kInvalidOp) {
    return MakeError("unknown operator '" + call.callee + "'", call.line);
  }
  if (GetOp(spec.create).kind != OpKind::kCreate) {
    return MakeError(
        "get_inputs may only create tensors (torch.randn, torch.rand, torch.randint), not call " +
            call.callee,
        call.line);
  }
  if (GetOp(spec.create).has(kIndexResult)) return ToIndexInputSpec(call, spec);
  const bool one_list = call.args.size() == 1 && !call.args[0].is_name &&
                        call.args[0].literal.type == AttrType::kIntList;
  for (const ArgExpr& arg : call.args) {
    if (!arg.keyword.empty() && !(arg.keyword == "size" && call.args.size() == 1)) {
      return MakeError("unknown keyword '" + arg.keyword + "' for " + call.callee, call.line);
    }
    if (one_list) {
      spec.shape = arg.literal.ints;
      return spec;
    }
    if (arg.is_name || arg.literal.type != AttrType::kInt) {
      return MakeError(
          call.callee + " takes a size (integers or one tuple of integers), got " + arg.text,
          call.line);
    }
    spec.shape.push_back(arg.literal.i);
  }
  return spec;
}

// return [torch.randn(...), ...]  (or a tuple)
Result<std::vector<InputSpec>> ParseInputList(Cursor& c) {
  c.Next();  // return
  if (!c.IsPunct('[') && !c.IsPunct('(')) return c.SyntaxError("'[' after return");
  const char close = c.Next().text[0] == '[' ? ']' : ')';
  std::vector<InputSpec> specs;
  while (!c.AcceptPunct(close)) {
    auto call = ParseCall(c);
    if (!call) return call.error();
    auto spec = ToInputSpec(call.value());
    if (!spec) return spec.error();
    specs.push_back(std::move(spec).value());
    if (!c.AcceptPunct(',') && !c.IsPunct(close)) {
      return c.SyntaxError(std::string("',' or '") + close + "'");
    }
  }
  if (auto e = c.ExpectEnd()) return *e;
  return specs;
}

Result<std::vector<InputSpec>> ParseGetInputs(const FunctionText& fn, int* return_line) {
  if (!fn.params.empty()) return MakeError("get_inputs takes no parameters", fn.line);
  if (fn.body.empty()) return MakeError("get_inputs has no return statement", fn.line);
  const LogicalLine& line = *fn.body.front();
  Cursor c(line);
  if (!c.IsName("return")) {
    return MakeError(
        "get_inputs must be a single 'return [torch.randn(...), ...]', found '" + line.source + "'",
        line.line);
  }
  if (fn.body.size() > 1) {
    return MakeError("statement after return: '" + fn.body[1]->source + "'", fn.body[1]->line);
  }
  *return_line = line.line;
  return ParseInputList(c);
}

// --- fused_operator -----------------------------------------------------------------------------

class BodyParser {
 public:
  explicit BodyParser(Program& program) : program_(program) {}

  std::optional<Error> AddParams(const FunctionText& fn, const std::vector<InputSpec>& specs,
                                 int specs_line) {
    if (specs.size() != fn.params.size()) {
      return MakeError("get_inputs returns " + std::to_string(specs.size()) +
                           " tensors but fused_operator takes " + std::to_string(fn.params.size()) +
                           " parameters",
                       specs_line);
    }
    for (size_t k = 0; k < specs.size(); ++k) {
      auto id = program_.AddInput(fn.params[k], specs[k].shape, specs[k].create, specs[k].range,
                                  specs[k].boolean);
      if (!id) return MakeError(id.error().message, specs[k].line);
      defined_at_[fn.params[k]] = fn.line;
    }
    return std::nullopt;
  }

  std::optional<Error> ParseBody(const FunctionText& fn) {
    bool returned = false;
    for (const LogicalLine* line : fn.body) {
      if (returned) {
        return MakeError("statement after return: '" + line->source + "'", line->line);
      }
      Cursor c(*line);
      std::optional<Error> error;
      if (c.IsName("return")) {
        error = ParseReturn(c);
        returned = true;
      } else {
        error = ParseAssignment(c);
      }
      if (error) return error;
    }
    if (!returned) return MakeError("fused_operator has no return statement", fn.line);
    return std::nullopt;
  }

 private:
  // return a  |  return a, b  |  return (a, b)
  std::optional<Error> ParseReturn(Cursor& c) {
    c.Next();  // return
    const bool paren = c.AcceptPunct('(');
    std::vector<ValueId> outputs;
    do {
      auto name = c.ExpectName("a value name");
      if (!name) return name.error();
      const ValueId id = program_.FindValue(name.value());
      if (!id.valid()) return MakeError("use of undefined name '" + name.value() + "'", c.line());
      outputs.push_back(id);
    } while (c.AcceptPunct(','));
    if (paren) {
      if (auto e = c.ExpectPunct(')')) return e;
    }
    if (auto e = c.ExpectEnd()) return e;
    program_.SetOutputs(std::move(outputs));
    return std::nullopt;
  }

  // name = callee(args)
  std::optional<Error> ParseAssignment(Cursor& c) {
    const int line = c.line();
    auto target = c.ExpectName("'name = operator(...)' or 'return'");
    if (!target) return target.error();
    if (auto e = c.ExpectPunct('=')) return e;
    auto call = ParseCall(c);
    if (!call) return call.error();
    if (auto e = c.ExpectEnd()) return e;

    const OpId op = ResolveOp(call.value().callee);
    if (op == kInvalidOp) {
      return MakeError("unknown operator '" + call.value().callee + "'", line);
    }
    if (GetOp(op).kind != OpKind::kCompute) {
      return MakeError(call.value().callee + " creates inputs; use it only in get_inputs()", line);
    }
    auto bound = BindArgs(GetOp(op), call.value().callee, call.value().args, program_, line);
    if (!bound) return bound.error();
    auto previous = defined_at_.find(target.value());
    if (previous != defined_at_.end()) {
      return MakeError("redefinition of '" + target.value() + "' (first defined on line " +
                           std::to_string(previous->second) + ")",
                       line);
    }
    auto id = program_.AddNode(op, std::move(bound.value().tensors), std::move(bound.value().attrs),
                               target.value(), line);
    if (!id) return MakeError(id.error().message, line);
    defined_at_[target.value()] = line;
    return std::nullopt;
  }

  Program& program_;
  std::unordered_map<std::string, int> defined_at_;
};

}  // namespace
}  // namespace ir_internal

Result<Program> Parse(std::string_view text) {
  using namespace ir_internal;
  auto lexed = Lex(text);
  if (!lexed) return lexed.error();
  auto functions = SplitFunctions(lexed.value());
  if (!functions) return functions.error();

  int specs_line = functions.value().inputs.line;
  auto specs = ParseGetInputs(functions.value().inputs, &specs_line);
  if (!specs) return specs.error();

  Program program;
  BodyParser body(program);
  if (auto e = body.AddParams(functions.value().fused, specs.value(), specs_line)) return *e;
  if (auto e = body.ParseBody(functions.value().fused)) return *e;
  return program;
}

}  // namespace drtriton
