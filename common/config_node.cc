#include "common/config_node.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace distlab {
namespace {

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string child_key(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "." + child;
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

ConfigNode::ConfigNode(YAML::Node node, std::string key, std::shared_ptr<const Context> context,
                       int fallback_line)
    : node_(std::move(node)),
      key_(std::move(key)),
      context_(std::move(context)),
      fallback_line_(fallback_line) {}

ConfigNode& ConfigNode::operator=(const ConfigNode& other) {
  node_.reset(other.node_);  // `node_ = other.node_` would overwrite the tree
  key_ = other.key_;
  context_ = other.context_;
  fallback_line_ = other.fallback_line_;
  return *this;
}

ConfigNode ConfigNode::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "", "cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  return load_string(text.str(), path);
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& name) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) throw ConfigError(name, 1, "", "the document is empty");
    return from_node(root, name);
  } catch (const YAML::Exception& e) {
    throw ConfigError(name, e.mark.is_null() ? 0 : e.mark.line + 1, "", "not valid YAML: " + e.msg);
  }
}

ConfigNode ConfigNode::from_node(YAML::Node root, const std::string& file,
                                 std::vector<Origin> origins) {
  auto context = std::make_shared<const Context>(Context{file, std::move(origins)});
  return ConfigNode(std::move(root), "", std::move(context), 1);
}

const ConfigNode::Origin* ConfigNode::origin() const {
  if (!node_.IsDefined()) return nullptr;
  for (const auto& o : context_->origins) {
    if (o.node.IsDefined() && o.node.is(node_)) return &o;
  }
  return nullptr;
}

int ConfigNode::line() const {
  const YAML::Mark mark = node_.Mark();
  return mark.is_null() ? fallback_line_ : mark.line + 1;
}

void ConfigNode::fail(const std::string& problem, const std::string& hint) const {
  const std::string key = key_.empty() ? "(top level)" : key_;
  if (const Origin* o = origin()) {
    throw ConfigError(context_->file, 0, key, problem,
                      "set by " + o->description + (hint.empty() ? "" : "; " + hint));
  }
  throw ConfigError(context_->file, line(), key, problem, hint);
}

std::string ConfigNode::describe_value() const {
  if (node_.IsScalar()) return "'" + node_.Scalar() + "'";
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a list";
  return "nothing";
}

bool ConfigNode::has(const std::string& child) const {
  return node_.IsMap() && node_[child].IsDefined();
}

std::optional<ConfigNode> ConfigNode::find(const std::string& child) const {
  if (node_.IsNull()) return std::nullopt;  // `key:` alone: an empty mapping
  if (!node_.IsMap()) fail("expected a mapping, got " + describe_value());
  YAML::Node found = node_[child];
  if (!found.IsDefined()) return std::nullopt;
  return ConfigNode(found, child_key(key_, child), context_, line());
}

ConfigNode ConfigNode::at(const std::string& child) const {
  auto found = find(child);
  if (!found) fail("missing required key '" + child + "'");
  return *found;
}

void ConfigNode::allow_only(const std::vector<std::string>& allowed) const {
  if (node_.IsNull()) return;
  if (!node_.IsMap()) fail("expected a mapping, got " + describe_value());
  std::vector<std::string> seen;
  for (const auto& kv : node_) {
    ConfigNode key_node(kv.first, key_, context_, line());
    if (!kv.first.IsScalar()) key_node.fail("a key must be a plain name");
    const std::string name = kv.first.Scalar();
    // YAML forbids repeated keys, but yaml-cpp keeps the first silently.
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      ConfigNode(kv.first, child_key(key_, name), context_, line()).fail("key given twice");
    }
    seen.push_back(name);
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    const std::string guess = closest_match(name, allowed);
    ConfigNode where(kv.first, child_key(key_, name), context_, line());
    where.fail("unknown key",
               guess.empty() ? "allowed: " + join(allowed) : "did you mean '" + guess + "'?");
  }
}

std::string ConfigNode::single_key() const {
  if (!node_.IsMap() || node_.size() != 1 || !node_.begin()->first.IsScalar()) {
    fail("expected a mapping with exactly one key, got " + describe_value());
  }
  return node_.begin()->first.Scalar();
}

std::size_t ConfigNode::size() const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe_value());
  return node_.size();
}

ConfigNode ConfigNode::operator[](std::size_t i) const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe_value());
  return ConfigNode(node_[i], key_ + "[" + std::to_string(i) + "]", context_, line());
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a text value, got " + describe_value());
  return node_.Scalar();
}

bool ConfigNode::as_bool() const {
  bool value = false;
  if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, value)) {
    fail("expected true or false, got " + describe_value());
  }
  return value;
}

int64_t ConfigNode::as_int(int64_t min, int64_t max) const {
  int64_t value = 0;
  if (!node_.IsScalar() || !YAML::convert<int64_t>::decode(node_, value)) {
    fail("expected an integer, got " + describe_value());
  }
  if (value < min || value > max) {
    fail("must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
         std::to_string(value));
  }
  return value;
}

double ConfigNode::as_double(double min, double max) const {
  double value = 0;
  if (!node_.IsScalar() || !YAML::convert<double>::decode(node_, value) || !std::isfinite(value)) {
    fail("expected a number, got " + describe_value());
  }
  if (value < min || value > max) {
    std::ostringstream range;
    range << "must be between " << min << " and " << max << ", got " << value;
    fail(range.str());
  }
  return value;
}

std::string ConfigNode::as_choice(const std::vector<std::string>& choices) const {
  const std::string value = as_string();
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    const std::string guess = closest_match(value, choices);
    fail("unknown value '" + value + "'",
         guess.empty() ? "one of: " + join(choices) : "did you mean '" + guess + "'?");
  }
  return value;
}

std::vector<int64_t> ConfigNode::as_int_list(int64_t min, int64_t max) const {
  std::vector<int64_t> out;
  for (std::size_t i = 0; i < size(); ++i) out.push_back((*this)[i].as_int(min, max));
  return out;
}

int64_t ConfigNode::get_int(const std::string& child, int64_t fallback, int64_t min,
                            int64_t max) const {
  auto found = find(child);
  return found ? found->as_int(min, max) : fallback;
}

double ConfigNode::get_double(const std::string& child, double fallback, double min,
                              double max) const {
  auto found = find(child);
  return found ? found->as_double(min, max) : fallback;
}

std::string ConfigNode::get_string(const std::string& child, const std::string& fallback) const {
  auto found = find(child);
  return found ? found->as_string() : fallback;
}

std::string ConfigNode::get_choice(const std::string& child, const std::string& fallback,
                                   const std::vector<std::string>& choices) const {
  auto found = find(child);
  return found ? found->as_choice(choices) : fallback;
}

bool ConfigNode::get_bool(const std::string& child, bool fallback) const {
  auto found = find(child);
  return found ? found->as_bool() : fallback;
}

}  // namespace distlab
