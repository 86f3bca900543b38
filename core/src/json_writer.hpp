// A minimal JSON writer for summaries and --describe (not used on the timed path).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace psb {

class JsonWriter {
 public:
  JsonWriter &begin_object();
  JsonWriter &end_object();
  JsonWriter &begin_array();
  JsonWriter &end_array();
  JsonWriter &key(std::string_view k);
  JsonWriter &value(std::string_view v);
  JsonWriter &value(const char *v) { return v ? value(std::string_view(v)) : null(); }
  JsonWriter &value(int64_t v);
  JsonWriter &value(uint64_t v);
  JsonWriter &value(int v) { return value(int64_t(v)); }
  JsonWriter &value(uint32_t v) { return value(uint64_t(v)); }
  JsonWriter &value(double v);
  JsonWriter &value(bool v);
  JsonWriter &null();
  template <typename T>
  JsonWriter &field(std::string_view k, const T &v) {
    return key(k).value(v);
  }

  const std::string &str() const { return out_; }

 private:
  void separate();
  JsonWriter &open(char bracket);   // '{' or '['
  JsonWriter &close(char bracket);  // '}' or ']'
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace psb
