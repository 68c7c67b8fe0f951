// YAML as the platforms that take a job description read it: Kubernetes
// and compose want text where they take text ("4" as an argument, not 4),
// so every scalar is text, and quoted where YAML would read it otherwise,
// but for the numbers and booleans made by plain().
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace distlab::realnet {

// A number or a boolean of a description, written plain.
template <class T>
YAML::Node plain(T value) {
  YAML::Node node(value);
  node.SetTag("?");
  return node;
}

YAML::Node sequence_of(const std::vector<std::string>& items);

// `header` (comment(), below), then each document as block YAML.
std::string emitted(const std::vector<YAML::Node>& documents, const std::string& header);

// The lines as a comment: what the file is and how it is used.
std::string comment(const std::vector<std::string>& lines);

}  // namespace distlab::realnet
