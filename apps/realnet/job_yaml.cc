#include "apps/realnet/job_yaml.h"

#include <cctype>
#include <cstdlib>

namespace distlab::realnet {
namespace {

// Whether YAML would read `text`, written plain, as other than a string
// ("4", "true", "~"): Kubernetes and compose refuse a number where they
// take a string (a container's arguments).
bool reads_as_other_than_text(const std::string& text) {
  if (text.empty()) return true;
  std::string lower;
  for (const char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}) {
    if (lower == word) return true;
  }
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// A node as block YAML: a scalar not made by plain() that would read as a
// number or a boolean is quoted.
void emit_node(YAML::Emitter& out, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      out << YAML::BeginMap;
      for (const auto& entry : node) {
        out << YAML::Key << entry.first.as<std::string>() << YAML::Value;
        emit_node(out, entry.second);
      }
      out << YAML::EndMap;
      return;
    case YAML::NodeType::Sequence:
      out << YAML::BeginSeq;
      for (const auto& item : node) emit_node(out, item);
      out << YAML::EndSeq;
      return;
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() != "?" && reads_as_other_than_text(text)) out << YAML::DoubleQuoted;
      out << text;
      return;
    }
    default:
      out << YAML::Null;
  }
}

}  // namespace

YAML::Node sequence_of(const std::vector<std::string>& items) {
  YAML::Node node(YAML::NodeType::Sequence);
  for (const std::string& item : items) node.push_back(item);
  return node;
}

std::string emitted(const std::vector<YAML::Node>& documents, const std::string& header) {
  YAML::Emitter out;
  out.SetIndent(2);
  for (const YAML::Node& document : documents) {
    out << YAML::BeginDoc;
    emit_node(out, document);
  }
  return header + out.c_str() + "\n";
}

std::string comment(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += (line.empty() ? "#" : "# " + line) + "\n";
  return text;
}

}  // namespace distlab::realnet
