// A checked view of a YAML document. Every accessor validates type and range
// and, on failure, throws ConfigError naming the file, the line and the full
// key path ("layers[3].dense.units"), so that every configuration format of
// the project (model specs now, scenarios later) reports errors the same way.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace distlab {

class ConfigNode {
 public:
  // Where a node of an edited tree came from when no file holds it: a value
  // set on the command line ("--set training.epochs=abc"). Errors about such
  // a node name its origin instead of a line.
  struct Origin {
    YAML::Node node;          // compared by identity (YAML::Node::is)
    std::string description;  // "--set training.epochs=abc"
  };

  // Parses a file; a missing file or a YAML syntax error is a ConfigError.
  static ConfigNode load_file(const std::string& path);
  // Parses text as if it were the file `name` (tests, embedded defaults).
  static ConfigNode load_string(const std::string& text, const std::string& name);
  // Wraps a tree that was parsed and then edited in memory (see yaml()), as
  // if read from `file`. Errors about the nodes in `origins`, which have no
  // line, read "file: key: problem (set by ORIGIN; hint)".
  static ConfigNode from_node(YAML::Node root, const std::string& file,
                              std::vector<Origin> origins = {});

  // Assignment rebinds the view; it never writes into the viewed tree (as
  // YAML::Node's assignment would).
  ConfigNode(const ConfigNode&) = default;
  ConfigNode& operator=(const ConfigNode& other);

  // The viewed tree, shared with this view: edits to it show through.
  const YAML::Node& yaml() const { return node_; }

  const std::string& file() const { return context_->file; }
  const std::string& key() const { return key_; }
  int line() const;  // 1-based; the parent's line when this node is absent

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_null() const { return node_.IsNull(); }  // `key:` or `key: ~`

  // Mappings. A null node (`key:` with nothing after it) reads as an empty
  // mapping, so that `- flatten:` needs no braces.
  bool has(const std::string& child) const;
  ConfigNode at(const std::string& child) const;  // required child
  std::optional<ConfigNode> find(const std::string& child) const;
  // Refuses any key not listed (suggesting the closest allowed one), keys
  // given twice, and keys that are not plain names.
  void allow_only(const std::vector<std::string>& allowed) const;
  // For "one-key" maps such as `- dense: {units: 10}`: the single key.
  std::string single_key() const;

  // Sequences.
  std::size_t size() const;
  ConfigNode operator[](std::size_t i) const;

  // Scalars, each checked against its range.
  std::string as_string() const;
  bool as_bool() const;
  int64_t as_int(int64_t min, int64_t max) const;
  double as_double(double min, double max) const;
  std::string as_choice(const std::vector<std::string>& choices) const;
  std::vector<int64_t> as_int_list(int64_t min, int64_t max) const;

  // Optional children with defaults.
  int64_t get_int(const std::string& child, int64_t fallback, int64_t min, int64_t max) const;
  double get_double(const std::string& child, double fallback, double min, double max) const;
  std::string get_string(const std::string& child, const std::string& fallback) const;
  std::string get_choice(const std::string& child, const std::string& fallback,
                         const std::vector<std::string>& choices) const;
  bool get_bool(const std::string& child, bool fallback) const;

  [[noreturn]] void fail(const std::string& problem, const std::string& hint = "") const;

 private:
  struct Context {
    std::string file;
    std::vector<Origin> origins;
  };

  ConfigNode(YAML::Node node, std::string key, std::shared_ptr<const Context> context,
             int fallback_line);
  std::string describe_value() const;
  const Origin* origin() const;  // where node_ came from when set in memory

  YAML::Node node_;
  std::string key_;
  std::shared_ptr<const Context> context_;
  int fallback_line_;  // where to point when node_ itself has no position
};

// The closest candidate by edit distance, or "" when nothing is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace distlab
