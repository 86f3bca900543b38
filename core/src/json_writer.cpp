#include "json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace psb {

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ", ";
    first_.back() = false;
  }
}

JsonWriter &JsonWriter::open(char bracket) {
  separate();
  out_ += bracket;
  first_.push_back(true);
  return *this;
}
JsonWriter &JsonWriter::close(char bracket) {
  out_ += bracket;
  first_.pop_back();
  return *this;
}
JsonWriter &JsonWriter::begin_object() { return open('{'); }
JsonWriter &JsonWriter::end_object() { return close('}'); }
JsonWriter &JsonWriter::begin_array() { return open('['); }
JsonWriter &JsonWriter::end_array() { return close(']'); }
JsonWriter &JsonWriter::key(std::string_view k) {
  value(k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}
JsonWriter &JsonWriter::value(std::string_view v) {
  separate();
  out_ += '"';
  for (unsigned char c : v) {
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\r':
        out_ += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_ += buf;
        } else {
          out_ += char(c);
        }
    }
  }
  out_ += '"';
  return *this;
}
JsonWriter &JsonWriter::value(int64_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter &JsonWriter::value(uint64_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter &JsonWriter::value(double v) {
  if (!std::isfinite(v)) return null();
  separate();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  out_ += buf;
  return *this;
}
JsonWriter &JsonWriter::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}
JsonWriter &JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

}  // namespace psb
