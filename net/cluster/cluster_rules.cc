#include "net/cluster/cluster_rules.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "common/config_node.h"

namespace distlab::net::rules {
namespace {

using strategy::ClusterSpec;
using strategy::TaskId;

const char* const kEndpointHint = "write host:port, e.g. 10.0.0.2:2222, or \"[::1]:2222\" for IPv6";

bool all_of_chars(const std::string& text, const char* allowed_punctuation) {
  return std::all_of(text.begin(), text.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view(allowed_punctuation).find(c) != std::string_view::npos;
  });
}

bool is_ipv4(const std::string& text) {
  in_addr address{};
  return inet_pton(AF_INET, text.c_str(), &address) == 1;
}

// RFC 1123 names, plus '_' (some DNS names have it): dot-separated labels of
// 1 to 63 letters, digits, '-' and '_', not starting or ending with '-'.
bool is_host_name(const std::string& name) {
  std::string text = name;
  if (!text.empty() && text.back() == '.') text.pop_back();  // fully qualified
  if (text.empty() || text.size() > 253 || !all_of_chars(text, "-_.")) return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('.', start);
    if (end == std::string::npos) end = text.size();
    const std::size_t length = end - start;
    if (length == 0 || length > 63 || text[start] == '-' || text[end - 1] == '-') return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool is_ipv6(const std::string& text, in6_addr* bytes) {
  const std::size_t percent = text.find('%');
  if (percent != std::string::npos) {
    const std::string zone = text.substr(percent + 1);
    if (zone.empty() || !all_of_chars(zone, "-_.")) return false;
  }
  in6_addr address{};
  if (inet_pton(AF_INET6, text.substr(0, percent).c_str(), &address) != 1) return false;
  if (bytes) *bytes = address;
  return true;
}

std::optional<Endpoint> try_parse_endpoint(const std::string& text, Problem& problem) {
  auto refuse = [&](const std::string& what, const std::string& hint = kEndpointHint) {
    problem = {"'" + text + "': " + what, hint};
    return std::nullopt;
  };
  if (text.empty()) return refuse("an empty address");
  Endpoint endpoint;
  std::string port_text;
  if (text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string::npos) return refuse("no ']' after the IPv6 address");
    endpoint.host = text.substr(1, close - 1);
    if (!is_ipv6(endpoint.host)) return refuse("'" + endpoint.host + "' is not an IPv6 address");
    if (close + 1 == text.size()) return refuse("no port");
    if (text[close + 1] != ':') return refuse("expected ':' and a port after ']'");
    port_text = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos) return refuse("no port");
    if (text.find(':') != colon) {
      return refuse("an IPv6 address needs brackets",
                    "write \"[" + text.substr(0, colon) + "]:" + text.substr(colon + 1) + "\"");
    }
    endpoint.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (endpoint.host.empty()) return refuse("no host");
    const bool numeric = std::all_of(endpoint.host.begin(), endpoint.host.end(), [](char c) {
      return c == '.' || std::isdigit(static_cast<unsigned char>(c));
    });
    if (numeric && !is_ipv4(endpoint.host)) {
      return refuse("'" + endpoint.host + "' is not an IPv4 address",
                    "four numbers from 0 to 255, e.g. 10.0.0.2");
    }
    if (!is_ipv4(endpoint.host) && !is_host_name(endpoint.host)) {
      return refuse("'" + endpoint.host + "' is not a host name",
                    "host names are labels of letters, digits and '-', joined by '.'");
    }
  }
  if (port_text.empty()) return refuse("no port");
  const bool digits = std::all_of(port_text.begin(), port_text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (!digits) return refuse("port '" + port_text + "' is not a number", kEndpointHint);
  const long port = port_text.size() > 6 ? 1'000'000 : std::stol(port_text);
  if (port < 1 || port > 65535) {
    return refuse("port " + port_text + " is out of range", "ports are 1 to 65535");
  }
  endpoint.port = static_cast<uint16_t>(port);
  return endpoint;
}

std::string canonical(const Endpoint& endpoint) {
  in6_addr bytes{};
  std::string host = lower(endpoint.host);
  if (is_ipv6(host, &bytes) && host.find('%') == std::string::npos) {
    char text[INET6_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET6, &bytes, text, sizeof text)) host = text;
  }
  return Endpoint{host, endpoint.port}.to_string();
}

const char* plural(Role role) {
  switch (role) {
    case Role::kChief:
      return "chiefs";
    case Role::kWorker:
      return "workers";
    case Role::kPs:
      return "ps";
  }
  return "?";
}

std::string count_text(std::size_t n, Role role) {
  if (n == 0) return std::string("no ") + plural(role);
  if (n == 1) return std::string("1 ") + strategy::role_name(role);
  return std::to_string(n) + " " + plural(role);
}

std::optional<Role> role_from_name(const std::string& name) {
  if (name == "chief" || name == "master") return Role::kChief;
  if (name == "worker") return Role::kWorker;
  if (name == "ps") return Role::kPs;
  return std::nullopt;
}

Problem unknown_role(const std::string& name) {
  if (name == "evaluator") {
    return {"evaluator tasks are not supported",
            "in distlab the chief evaluates; remove the evaluator"};
  }
  const std::string guess = closest_match(name, {"chief", "worker", "ps", "master"});
  return {"unknown role '" + name + "'",
          guess.empty() ? "roles: chief, worker, ps" : "did you mean '" + guess + "'?"};
}

std::optional<ClusterIssue> check_cluster(const ClusterAddresses& cluster,
                                          const std::string& chief_key) {
  const ClusterSpec spec = cluster.spec();
  if (spec.task_count() == 0) {
    return ClusterIssue{"",
                        -1,
                        {"the cluster lists no tasks",
                         "list addresses under chief, worker and ps, e.g. "
                         "chief: [\"10.0.0.2:2222\"]"}};
  }
  if (cluster.chief.size() > 1) {
    return ClusterIssue{
        chief_key,
        1,
        {"a second chief: a cluster has at most one", "list the other tasks under worker"}};
  }
  std::map<std::string, TaskId> seen;
  for (const Role role : kRoles) {
    const auto& list = list_of(cluster, role);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const TaskId task{role, static_cast<int>(i)};
      const auto [it, inserted] = seen.emplace(canonical(list[i]), task);
      if (inserted) continue;
      return ClusterIssue{role == Role::kChief ? chief_key : strategy::role_name(role),
                          static_cast<int>(i),
                          {"'" + list[i].to_string() + "' is given twice: it is also " +
                               strategy::task_name(it->second) + "'s address",
                           "every task needs its own host:port"}};
    }
  }
  if (spec.replicas() == 0) {
    return ClusterIssue{
        "",
        -1,
        {"the cluster has parameter servers only: nothing would train", "add a chief or a worker"}};
  }
  return std::nullopt;
}

bool is_blank(const char* text) {
  if (!text) return true;
  for (; *text; ++text) {
    if (!std::isspace(static_cast<unsigned char>(*text))) return false;
  }
  return true;
}

}  // namespace distlab::net::rules
