// An indenting writer for the Python/Triton text the code generator emits.  Emitters
// append lines; Indent()/Dedent() bracket the body of a def, for or if.
#pragma once

#include <string>
#include <utility>

namespace drtriton::codegen {

class PythonWriter {
 public:
  explicit PythonWriter(int depth = 0) : depth_(depth) {}
  // Appends one line at the current depth (an empty string gives an empty line).
  void Line(const std::string& text) {
    if (!text.empty()) out_.append(static_cast<size_t>(depth_) * 4, ' ');
    out_ += text;
    out_ += '\n';
  }
  // `header` ends in ':'; the lines written until Dedent() form its body.
  void Open(const std::string& header) {
    Line(header);
    ++depth_;
  }
  void Dedent() { --depth_; }
  void Blank() { out_ += '\n'; }
  int depth() const { return depth_; }
  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
  int depth_ = 0;
};

}  // namespace drtriton::codegen
