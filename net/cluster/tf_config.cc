// TensorFlow's TF_CONFIG: the cluster and this process's task as JSON, read
// with the JSON path of every error, and written for the launcher's tasks.
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "common/error.h"
#include "net/cluster/cluster_config.h"
#include "net/cluster/cluster_rules.h"

namespace distlab::net {
namespace {

using namespace rules;
using strategy::TaskId;
using Json = nlohmann::json;

[[noreturn]] void tf_fail(const std::string& path, const std::string& problem,
                          const std::string& hint = "") {
  std::string message = "TF_CONFIG: ";
  if (!path.empty()) message += path + ": ";
  message += problem;
  if (!hint.empty()) message += " (" + hint + ")";
  throw InputError(message);
}

std::string describe(const Json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "a list";
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// nlohmann::json keeps the last of two equal keys silently; a cluster with
// "worker" twice would lose tasks without a word, so they are refused.
Json parse_json(const std::string& text) {
  struct Object {
    std::set<std::string> keys;
    std::string key;  // the latest key read in this object
  };
  std::vector<Object> objects;
  std::string duplicate;  // path of the first key given twice
  auto watch = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      objects.emplace_back();
    } else if (event == Json::parse_event_t::object_end && !objects.empty()) {
      objects.pop_back();
    } else if (event == Json::parse_event_t::key && !objects.empty()) {
      Object& object = objects.back();
      object.key = parsed.get<std::string>();
      if (!object.keys.insert(object.key).second && duplicate.empty()) {
        for (const Object& o : objects) duplicate += (duplicate.empty() ? "" : ".") + o.key;
      }
    }
    return true;
  };
  Json doc;
  try {
    doc = Json::parse(text, watch);
  } catch (const Json::exception& e) {
    // A syntax error, or a number beyond a double (out_of_range.406, found
    // by fuzzing): "[json.exception.parse_error.101] parse error at ...".
    std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    if (what.front() == '[' && bracket != std::string::npos) what = what.substr(bracket + 2);
    tf_fail("", "not valid JSON: " + what);
  }
  if (!duplicate.empty()) tf_fail(duplicate, "key given twice");
  return doc;
}

ClusterAddresses tf_cluster(const Json& doc) {
  const auto found = doc.find("cluster");
  const std::string example = "\"cluster\": {\"chief\": [\"host:port\"], \"worker\": [...]}";
  if (found == doc.end()) tf_fail("cluster", "missing", "TF_CONFIG lists the tasks: " + example);
  if (!found->is_object()) {
    tf_fail("cluster", "expected an object, got " + describe(*found), example);
  }
  if (found->contains("chief") && found->contains("master")) {
    tf_fail("cluster.master",
            "both chief and master are given (master is TensorFlow's old name for chief)",
            "keep one of them");
  }
  ClusterAddresses cluster;
  const std::string chief_key = found->contains("master") ? "master" : "chief";
  for (const auto& [name, list] : found->items()) {
    const std::string path = "cluster." + name;
    const auto role = role_from_name(name);
    if (!role) {
      const Problem problem = unknown_role(name);
      tf_fail(path, problem.what, problem.hint);
    }
    if (!list.is_array()) {
      tf_fail(path, "expected a list of \"host:port\" strings, got " + describe(list),
              "\"" + name + "\": [\"10.0.0.2:2222\"]");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string entry_path = path + "[" + std::to_string(i) + "]";
      if (!list[i].is_string()) {
        tf_fail(entry_path, "expected a \"host:port\" string, got " + describe(list[i]));
      }
      Problem problem;
      const auto endpoint = try_parse_endpoint(list[i].get<std::string>(), problem);
      if (!endpoint) tf_fail(entry_path, problem.what, problem.hint);
      list_of(cluster, *role).push_back(*endpoint);
    }
  }
  if (const auto issue = check_cluster(cluster, chief_key)) {
    std::string path = "cluster";
    if (!issue->role_key.empty()) path += "." + issue->role_key;
    if (issue->index >= 0) path += "[" + std::to_string(issue->index) + "]";
    tf_fail(path, issue->problem.what, issue->problem.hint);
  }
  return cluster;
}

TaskId tf_task(const Json& doc, const ClusterAddresses& cluster) {
  const std::string example = "\"task\": {\"type\": \"worker\", \"index\": 0}";
  const auto task = doc.find("task");
  if (task == doc.end())
    tf_fail("task", "missing", "TF_CONFIG names this process's task: " + example);
  if (!task->is_object()) tf_fail("task", "expected an object, got " + describe(*task), example);

  const auto type = task->find("type");
  if (type == task->end()) tf_fail("task", "missing \"type\"", example);
  if (!type->is_string()) tf_fail("task.type", "expected a role name, got " + describe(*type));
  const std::string name = type->get<std::string>();
  const auto role = role_from_name(name);
  if (!role) {
    const Problem problem = unknown_role(name);
    tf_fail("task.type", problem.what, problem.hint);
  }

  const auto index = task->find("index");
  if (index == task->end()) tf_fail("task", "missing \"index\"", example);
  // nlohmann::json reads 0, 1, ... as unsigned and -1 as signed.
  if (!index->is_number_unsigned()) {
    tf_fail("task.index", "expected a whole number from 0, got " + describe(*index));
  }
  const std::size_t count = list_of(cluster, *role).size();
  if (count == 0) {
    tf_fail("task.type", "'" + name + "', but the cluster has " + count_text(0, *role),
            "add them to \"cluster\", or fix the task's type");
  }
  const uint64_t i = index->get<uint64_t>();
  if (i >= count) {
    tf_fail("task.index",
            std::to_string(i) + " is out of range, the cluster has " + count_text(count, *role),
            "indices start at 0");
  }
  return {*role, static_cast<int>(i)};
}

}  // namespace

TaskAssignment parse_tf_config(const std::string& json_text) {
  if (is_blank(json_text.c_str())) tf_fail("", "empty");
  const Json doc = parse_json(json_text);
  if (!doc.is_object()) {
    tf_fail("", "expected a JSON object with \"cluster\" and \"task\", got " + describe(doc));
  }
  TaskAssignment assignment;
  assignment.cluster = tf_cluster(doc);
  assignment.self = tf_task(doc, assignment.cluster);
  return assignment;
}

std::string tf_config_json(const TaskAssignment& assignment) {
  Json cluster = Json::object();
  for (const Role role : kRoles) {
    const auto& list = list_of(assignment.cluster, role);
    if (list.empty()) continue;
    Json& addresses = cluster[strategy::role_name(role)] = Json::array();
    for (const Endpoint& e : list) addresses.push_back(e.to_string());
  }
  const Json doc = {
      {"cluster", cluster},
      {"task",
       {{"type", strategy::role_name(assignment.self.role)}, {"index", assignment.self.index}}}};
  return doc.dump();
}

}  // namespace distlab::net
