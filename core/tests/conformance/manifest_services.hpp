// The services a driver's manifest.toml declares, read as far as the conformance suite
// needs them: each [[services]] table's name, transport and broker (the orchestrator's
// full reader is python/psbench/manifests.py). Multi-line strings are skipped.
#pragma once
#include <fstream>
#include <string>
#include <vector>

namespace psb_conformance {

struct ManifestService {
  std::string name;
  std::string transport;  // empty: every run needs it
  bool broker = false;    // psbench starts it on a port and passes option broker
};

// `key = "value"` or `key = true` -> value; anything else -> "".
inline std::string toml_value(const std::string &line, const std::string &key) {
  const size_t eq = line.find('=');
  if (eq == std::string::npos) return "";
  std::string k = line.substr(0, eq);
  k.erase(k.find_last_not_of(" \t") + 1);
  k.erase(0, k.find_first_not_of(" \t"));
  if (k != key) return "";
  std::string v = line.substr(eq + 1);
  v.erase(0, v.find_first_not_of(" \t"));
  if (!v.empty() && v[0] == '"') return v.substr(1, v.find('"', 1) - 1);
  return v.substr(0, v.find_first_of(" \t#"));
}

inline std::vector<ManifestService> manifest_services(const std::string &path) {
  std::vector<ManifestService> out;
  std::ifstream in(path);
  bool in_service = false, in_multiline = false;
  for (std::string line; std::getline(in, line);) {
    const size_t quotes = [&] {
      size_t n = 0;
      for (size_t at = line.find("\"\"\""); at != std::string::npos;
           at = line.find("\"\"\"", at + 3))
        ++n;
      return n;
    }();
    if (in_multiline || quotes % 2 == 1) {
      if (quotes % 2 == 1) in_multiline = !in_multiline;
      continue;
    }
    if (line.rfind("[", 0) == 0) {
      in_service = line.rfind("[[services]]", 0) == 0;
      if (in_service) out.emplace_back();
      continue;
    }
    if (!in_service) continue;
    if (auto v = toml_value(line, "name"); !v.empty()) out.back().name = v;
    if (auto v = toml_value(line, "transport"); !v.empty()) out.back().transport = v;
    if (toml_value(line, "broker") == "true") out.back().broker = true;
  }
  return out;
}

}  // namespace psb_conformance
