// What the readers of a cluster share (the cluster file, TF_CONFIG, the
// command line in cluster_config.cc): addresses, role names, the checks of
// a whole cluster and the wording of their problems. Internal to net/.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <optional>
#include <string>

#include "net/cluster/cluster_config.h"

namespace distlab::net::rules {

using strategy::Role;

inline constexpr Role kRoles[] = {Role::kChief, Role::kWorker, Role::kPs};

// What is wrong with a value, apart from where it is: each reader adds its
// own place (file, line and key; a JSON path).
struct Problem {
  std::string what;
  std::string hint;
};

std::string lower(std::string text);
// An IPv6 address, optionally with a zone ("fe80::1%eth0"); `bytes` gets
// the address.
bool is_ipv6(const std::string& text, in6_addr* bytes = nullptr);
// host:port or [IPv6]:port; on failure, `problem` says why.
std::optional<Endpoint> try_parse_endpoint(const std::string& text, Problem& problem);
// Two spellings of one address compare equal: host names in any case, IPv6
// in any of its forms.
std::string canonical(const Endpoint& endpoint);
// Null, empty or only white space.
bool is_blank(const char* text);

const char* plural(Role role);
// "no workers", "1 worker", "2 workers".
std::string count_text(std::size_t n, Role role);
// The list of `role` in a cluster, const or not.
template <typename Cluster>
auto& list_of(Cluster& cluster, Role role) {
  switch (role) {
    case Role::kChief:
      return cluster.chief;
    case Role::kWorker:
      return cluster.worker;
    case Role::kPs:
      break;
  }
  return cluster.ps;
}

// TensorFlow's role names; "master" is its old name for the chief.
std::optional<Role> role_from_name(const std::string& name);
Problem unknown_role(const std::string& name);

// Where a problem of a whole cluster lies: the cluster itself (empty role
// key), a role's list (index -1) or one entry.
struct ClusterIssue {
  std::string role_key;  // as written: "master" for a chief given as master
  int index = -1;
  Problem problem;
};

// The first thing wrong with a cluster as a whole (no tasks, two chiefs,
// an address given twice, nothing that trains); `chief_key` is how the
// reader's input named the chief.
std::optional<ClusterIssue> check_cluster(const ClusterAddresses& cluster,
                                          const std::string& chief_key);

}  // namespace distlab::net::rules
