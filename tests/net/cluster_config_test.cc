#include "net/cluster/cluster_config.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "run/scenario.h"
#include "support/error_message.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using distlab::ConfigError;
using distlab::InputError;
using distlab::net::assignment_from;
using distlab::net::check_matches;
using distlab::net::ClusterAddresses;
using distlab::net::Endpoint;
using distlab::net::is_loopback;
using distlab::net::load_cluster_file;
using distlab::net::loopback_cluster;
using distlab::net::parse_endpoint;
using distlab::net::parse_tf_config;
using distlab::net::TaskAssignment;
using distlab::net::tf_config_json;
using distlab::strategy::ClusterSpec;
using distlab::strategy::Role;
using distlab::strategy::TaskId;
using distlab::testing::message_of;

namespace {

const std::string kSource = DISTLAB_SOURCE_DIR;
const std::string kExamples = kSource + "/net/examples/";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file in the temporary directory that is removed with this object; the
// process id keeps test runs of two build directories apart.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("distlab_cluster_test_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

const char* kTwoWorkers =
    R"({"cluster": {"chief": ["10.0.0.2:2222"], "worker": ["10.0.0.3:2222", "10.0.0.4:2222"]},
        "task": {"type": "worker", "index": 1}})";

const char* kTwoWorkersYaml =
    "cluster:\n"
    "  chief: [\"10.0.0.2:2222\"]\n"
    "  worker: [\"10.0.0.3:2222\", \"10.0.0.4:2222\"]\n";

}  // namespace

TEST_CASE("The example cluster file lists the taxi-tips lab's tasks") {
  const ClusterAddresses cluster = load_cluster_file(kExamples + "cluster_4workers.yaml");
  const ClusterSpec spec = cluster.spec();
  CHECK(spec.chiefs == 1);
  CHECK(spec.workers == 4);
  CHECK(spec.ps == 1);
  CHECK(cluster.of({Role::kChief, 0}) == Endpoint{"10.0.0.2", 2222});
  CHECK(cluster.of({Role::kWorker, 2}) == Endpoint{"10.0.0.5", 2222});
  CHECK(cluster.of({Role::kPs, 0}) == Endpoint{"10.0.0.7", 2222});
  CHECK_THROWS_AS(cluster.of({Role::kWorker, 4}), std::out_of_range);
  CHECK_THROWS_AS(cluster.of({Role::kPs, -1}), std::out_of_range);
  // It is the cluster of the scenario it is written for.
  const auto scenario = distlab::run::load_scenario(kSource + "/scenarios/ps_4workers.yaml");
  CHECK_NOTHROW(check_matches(cluster, scenario.cluster.spec));
}

TEST_CASE("The example TF_CONFIG names worker 0 of the example cluster") {
  const TaskAssignment a = parse_tf_config(read_text(kExamples + "tf_config_worker0.json"));
  CHECK(a.self == TaskId{Role::kWorker, 0});
  CHECK(a.cluster == load_cluster_file(kExamples + "cluster_4workers.yaml"));
}

TEST_CASE("Endpoints are read from host:port, host names and bracketed IPv6") {
  using Row = std::tuple<std::string, std::string, int, std::string>;
  const auto [text, host, port, written] =
      GENERATE(table<std::string, std::string, int, std::string>({
          Row{"10.0.0.2:2222", "10.0.0.2", 2222, "10.0.0.2:2222"},
          Row{"worker-0.training.svc.cluster.local:1", "worker-0.training.svc.cluster.local", 1,
              "worker-0.training.svc.cluster.local:1"},
          Row{"localhost:65535", "localhost", 65535, "localhost:65535"},
          Row{"host.example.:80", "host.example.", 80, "host.example.:80"},
          Row{"[::1]:2222", "::1", 2222, "[::1]:2222"},
          Row{"[fd00::3]:2222", "fd00::3", 2222, "[fd00::3]:2222"},
          Row{"[fe80::1%eth0]:2222", "fe80::1%eth0", 2222, "[fe80::1%eth0]:2222"},
          Row{"[::ffff:10.0.0.2]:8", "::ffff:10.0.0.2", 8, "[::ffff:10.0.0.2]:8"},
      }));
  CAPTURE(text);
  const Endpoint e = parse_endpoint(text);
  CHECK(e.host == host);
  CHECK(e.port == port);
  CHECK(e.to_string() == written);
  CHECK(parse_endpoint(e.to_string()) == e);
}

TEST_CASE("A bad endpoint is refused with the value and what is wrong") {
  using Row = std::tuple<std::string, std::string>;
  const auto [text, expected] = GENERATE(table<std::string, std::string>({
      Row{"", "'': an empty address"},
      Row{"10.0.0.2", "'10.0.0.2': no port (write host:port"},
      Row{"10.0.0.2:", "'10.0.0.2:': no port"},
      Row{":2222", "':2222': no host"},
      Row{"10.0.0.2:0", "'10.0.0.2:0': port 0 is out of range (ports are 1 to 65535)"},
      Row{"10.0.0.2:65536", "'10.0.0.2:65536': port 65536 is out of range"},
      Row{"10.0.0.2:123456789012", "'10.0.0.2:123456789012': port 123456789012 is out of range"},
      Row{"10.0.0.2:-1", "'10.0.0.2:-1': port '-1' is not a number"},
      Row{"10.0.0.2: 22", "'10.0.0.2: 22': port ' 22' is not a number"},
      Row{"10.0.0.300:22", "'10.0.0.300:22': '10.0.0.300' is not an IPv4 address"},
      Row{"1.2.3:22", "'1.2.3:22': '1.2.3' is not an IPv4 address"},
      Row{"-host:22", "'-host:22': '-host' is not a host name"},
      Row{"a..b:22", "'a..b:22': 'a..b' is not a host name"},
      Row{"::1:2222", "'::1:2222': an IPv6 address needs brackets (write \"[::1]:2222\")"},
      Row{"[::1]", "'[::1]': no port"},
      Row{"[::1]2222", "'[::1]2222': expected ':' and a port after ']'"},
      Row{"[::1:2222", "'[::1:2222': no ']' after the IPv6 address"},
      Row{"[10.0.0.2]:22", "'[10.0.0.2]:22': '10.0.0.2' is not an IPv6 address"},
      Row{"[fe80::1%]:22", "'[fe80::1%]:22': 'fe80::1%' is not an IPv6 address"},
  }));
  CAPTURE(text);
  // Lambdas capture copies, not structured bindings (clang before 16
  // refuses those).
  CHECK_THAT(message_of<InputError>([input = text] { parse_endpoint(input); }),
             StartsWith(expected));
}

TEST_CASE("Every bad cluster file of the corpus is refused with file, line, key and hint") {
  const std::string dir = kSource + "/tests/net/clusters";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    CAPTURE(path);
    std::ifstream in(path);
    std::string first_line;
    std::getline(in, first_line);
    const std::string prefix = "# expect: ";
    REQUIRE_THAT(first_line, StartsWith(prefix));
    const std::string expected = first_line.substr(prefix.size());
    try {
      load_cluster_file(path);
      FAIL("the cluster file was accepted");
    } catch (const ConfigError& e) {
      CHECK_THAT(std::string(e.what()), StartsWith(dir + "/") && Contains(expected));
      CHECK(e.line() > 1);  // below the expect line: every error has its line
    }
    ++files;
  }
  CHECK(files >= 30);
}

TEST_CASE("A missing cluster file is a ConfigError naming it") {
  CHECK_THROWS_WITH(load_cluster_file("no/such/cluster.yaml"),
                    "no/such/cluster.yaml: cannot open the file");
  CHECK_THROWS_AS(load_cluster_file("no/such/cluster.yaml"), ConfigError);
}

TEST_CASE("A cluster file reads TensorFlow's master as the chief, and IPv6") {
  const TempFile file("master.yaml",
                      "cluster:\n"
                      "  master: [\"[fd00::2]:2222\"]\n"
                      "  worker: [\"[fd00::3]:2222\", \"worker-1:2222\"]\n"
                      "  ps:\n");
  const ClusterAddresses cluster = load_cluster_file(file.path());
  REQUIRE(cluster.chief.size() == 1);
  CHECK(cluster.chief[0] == Endpoint{"fd00::2", 2222});
  CHECK(cluster.worker == std::vector<Endpoint>{{"fd00::3", 2222}, {"worker-1", 2222}});
  CHECK(cluster.ps.empty());
  CHECK(cluster.spec().task_count() == 3);
}

TEST_CASE("TF_CONFIG gives the cluster and the task") {
  const TaskAssignment a = parse_tf_config(kTwoWorkers);
  CHECK(a.self == TaskId{Role::kWorker, 1});
  CHECK(a.cluster.chief == std::vector<Endpoint>{{"10.0.0.2", 2222}});
  CHECK(a.cluster.worker.size() == 2);
  CHECK(a.cluster.of(a.self) == Endpoint{"10.0.0.4", 2222});
  CHECK(a.cluster.ps.empty());
}

TEST_CASE("TF_CONFIG reads master as the chief") {
  const TaskAssignment a = parse_tf_config(
      R"({"cluster": {"master": ["m:2222"], "worker": ["w:2222"], "ps": ["p:2222"]},
          "task": {"type": "master", "index": 0}})");
  CHECK(a.self == TaskId{Role::kChief, 0});
  CHECK(a.cluster.chief == std::vector<Endpoint>{{"m", 2222}});
  CHECK(a.cluster.spec().task_count() == 3);
}

TEST_CASE("TF_CONFIG as cloud launchers write it: the keys they add are ignored") {
  const TaskAssignment a = parse_tf_config(R"({
      "cluster": {"chief": ["cmle-training-master-0:2222"],
                  "worker": ["cmle-training-worker-0:2222"],
                  "ps": ["cmle-training-ps-0:2222"]},
      "environment": "cloud",
      "rpc_layer": "grpc",
      "job": {"scale_tier": "CUSTOM", "master_type": "n1-standard-4"},
      "task": {"type": "ps", "index": 0, "trial": "", "cloud": "x"}})");
  CHECK(a.self == TaskId{Role::kPs, 0});
  CHECK(a.cluster.of(a.self).host == "cmle-training-ps-0");
}

TEST_CASE("A bad TF_CONFIG is refused with its JSON path") {
  using Row = std::tuple<std::string, std::string>;
  const std::string task = R"(, "task": {"type": "worker", "index": 0}})";
  const auto [json, expected] = GENERATE_COPY(table<std::string, std::string>({
      Row{" ", "TF_CONFIG: empty"},
      Row{"{\"cluster\": ", "TF_CONFIG: not valid JSON: parse error at line 1"},
      // Found by fuzzing: a number beyond a double ended ./realnet with an
      // uncaught nlohmann exception.
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 1e999}})",
          "TF_CONFIG: not valid JSON: number overflow parsing '1e999'"},
      Row{"[1, 2]", "TF_CONFIG: expected a JSON object with \"cluster\" and \"task\", got a list"},
      Row{R"({"task": {"type": "worker", "index": 0}})", "TF_CONFIG: cluster: missing"},
      Row{R"({"cluster": ["10.0.0.2:2222"])" + task,
          "TF_CONFIG: cluster: expected an object, got a list"},
      Row{R"({"cluster": {"wroker": ["w:1"]})" + task,
          "TF_CONFIG: cluster.wroker: unknown role 'wroker' (did you mean 'worker'?)"},
      Row{R"({"cluster": {"worker": ["w:1"], "evaluator": ["e:1"]})" + task,
          "TF_CONFIG: cluster.evaluator: evaluator tasks are not supported (in distlab the "
          "chief evaluates; remove the evaluator)"},
      Row{R"({"cluster": {"worker": "w:1"})" + task,
          "TF_CONFIG: cluster.worker: expected a list of \"host:port\" strings, got \"w:1\""},
      Row{R"({"cluster": {"worker": {"0": "w:1"}})" + task,
          "TF_CONFIG: cluster.worker: expected a list of \"host:port\" strings, got an object"},
      Row{R"({"cluster": {"worker": ["w:1", 2222]})" + task,
          "TF_CONFIG: cluster.worker[1]: expected a \"host:port\" string, got 2222"},
      Row{R"({"cluster": {"worker": ["w:1", "w:99999"]})" + task,
          "TF_CONFIG: cluster.worker[1]: 'w:99999': port 99999 is out of range (ports are 1 to "
          "65535)"},
      Row{R"({"cluster": {"chief": ["w:1"], "worker": ["w:1"]})" + task,
          "TF_CONFIG: cluster.worker[0]: 'w:1' is given twice: it is also chief:0's address"},
      Row{R"({"cluster": {"worker": ["a:1"], "worker": ["b:1"]})" + task,
          "TF_CONFIG: cluster.worker: key given twice"},
      Row{R"({"cluster": {"chief": ["a:1", "b:1"], "worker": ["w:1"]})" + task,
          "TF_CONFIG: cluster.chief[1]: a second chief: a cluster has at most one"},
      Row{R"({"cluster": {"chief": ["a:1"], "master": ["b:1"], "worker": ["w:1"]})" + task,
          "TF_CONFIG: cluster.master: both chief and master are given"},
      Row{R"({"cluster": {"worker": []})" + task, "TF_CONFIG: cluster: the cluster lists no tasks"},
      Row{R"({"cluster": {"ps": ["p:1"]})" + task,
          "TF_CONFIG: cluster: the cluster has parameter servers only"},
      Row{R"({"cluster": {"worker": ["w:1"]}})", "TF_CONFIG: task: missing"},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": [0]})",
          "TF_CONFIG: task: expected an object, got a list"},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"index": 0}})",
          "TF_CONFIG: task: missing \"type\""},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker"}})",
          "TF_CONFIG: task: missing \"index\""},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": 1, "index": 0}})",
          "TF_CONFIG: task.type: expected a role name, got 1"},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "wroker", "index": 0}})",
          "TF_CONFIG: task.type: unknown role 'wroker' (did you mean 'worker'?)"},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "evaluator", "index": 0}})",
          "TF_CONFIG: task.type: evaluator tasks are not supported"},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": -1}})",
          "TF_CONFIG: task.index: expected a whole number from 0, got -1"},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": "0"}})",
          "TF_CONFIG: task.index: expected a whole number from 0, got \"0\""},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0.5}})",
          "TF_CONFIG: task.index: expected a whole number from 0, got 0.5"},
      Row{R"({"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker", "index": 3}})",
          "TF_CONFIG: task.index: 3 is out of range, the cluster has 2 workers (indices start "
          "at 0)"},
      Row{R"({"cluster": {"chief": ["c:1"], "worker": ["w:1"]},
              "task": {"type": "chief", "index": 1}})",
          "TF_CONFIG: task.index: 1 is out of range, the cluster has 1 chief"},
      Row{R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "ps", "index": 0}})",
          "TF_CONFIG: task.type: 'ps', but the cluster has no ps (add them to \"cluster\", or "
          "fix the task's type)"},
  }));
  CAPTURE(json);
  CHECK_THAT(message_of<InputError>([input = json] { parse_tf_config(input); }),
             StartsWith(expected));
}

TEST_CASE("The TF_CONFIG written for a task reads back as the same task") {
  TaskAssignment a;
  a.cluster.chief = {{"10.0.0.2", 2222}};
  a.cluster.worker = {{"::1", 2223}, {"worker-1", 2224}};
  a.cluster.ps = {{"10.0.0.7", 2225}};
  a.self = {Role::kPs, 0};
  const std::string json = tf_config_json(a);
  CHECK_THAT(json, Contains("\"[::1]:2223\""));
  CHECK(parse_tf_config(json) == a);
  a.cluster.ps.clear();  // a role without tasks is left out
  a.self = {Role::kWorker, 1};
  CHECK_THAT(tf_config_json(a), !Contains("\"ps\""));
  CHECK(parse_tf_config(tf_config_json(a)) == a);
}

// (A test name must not start with "--": Catch would read it as an option.)
TEST_CASE("The command line's --cluster, --role and --index, or TF_CONFIG, say who we are") {
  const TempFile file("two_workers.yaml", kTwoWorkersYaml);
  const std::string path = file.path();

  SECTION("flags") {
    const auto a = assignment_from(path, std::string("worker"), 1, nullptr);
    CHECK(a.self == TaskId{Role::kWorker, 1});
    CHECK(a.cluster.worker.size() == 2);
  }
  SECTION("the chief needs no index, and master is the chief") {
    CHECK(assignment_from(path, std::string("chief"), std::nullopt, nullptr).self ==
          TaskId{Role::kChief, 0});
    CHECK(assignment_from(path, std::string("master"), 0, nullptr).self == TaskId{Role::kChief, 0});
  }
  SECTION("TF_CONFIG alone; a blank one counts as unset") {
    CHECK(assignment_from(std::nullopt, std::nullopt, std::nullopt, kTwoWorkers).self ==
          TaskId{Role::kWorker, 1});
    CHECK(assignment_from(path, std::string("worker"), 0, " \n").self == TaskId{Role::kWorker, 0});
  }
  SECTION("flags and a TF_CONFIG that agree") {
    const auto a = assignment_from(path, std::string("worker"), 1, kTwoWorkers);
    CHECK(a == parse_tf_config(kTwoWorkers));
  }
  SECTION("errors") {
    // TF_CONFIG as text, std::nullopt for unset: the rows outlive this run
    // of the test case, so they hold no pointers into it.
    using Text = std::optional<std::string>;
    using Row = std::tuple<Text, Text, std::optional<int>, Text, std::string>;
    const std::string ps_tf_config =
        R"({"cluster": {"chief": ["10.0.0.2:2222"], "worker": ["10.0.0.3:2222", "10.0.0.4:2222"],
                        "ps": ["10.0.0.7:2222"]}, "task": {"type": "worker", "index": 1}})";
    const std::string moved_tf_config =
        R"({"cluster": {"chief": ["10.0.0.2:2222"], "worker": ["10.0.0.3:2222", "10.0.0.9:2222"]},
            "task": {"type": "worker", "index": 1}})";
    const std::string no_cluster =
        "no cluster given: pass --cluster FILE with --role and --index, or set TF_CONFIG";
    const std::string remedy = "unset TF_CONFIG, or leave out --cluster, --role and --index";
    const Row row = GENERATE_COPY(table<Text, Text, std::optional<int>, Text, std::string>({
        Row{std::nullopt, std::nullopt, std::nullopt, std::nullopt, no_cluster},
        Row{std::nullopt, std::nullopt, std::nullopt, "", no_cluster},
        Row{std::nullopt, "worker", 0, kTwoWorkers, "--role needs --cluster FILE"},
        Row{std::nullopt, std::nullopt, 0, std::nullopt, "--index needs --cluster FILE"},
        Row{path, std::nullopt, 0, std::nullopt, "--cluster " + path + " needs --role"},
        Row{path, "wroker", 0, std::nullopt,
            "--role wroker: unknown role 'wroker' (did you mean 'worker'?)"},
        Row{path, "evaluator", 0, std::nullopt,
            "--role evaluator: evaluator tasks are not supported"},
        Row{path, "worker", std::nullopt, std::nullopt,
            "--role worker needs --index (" + path + " lists 2 workers)"},
        Row{path, "worker", 2, std::nullopt,
            "--index 2 is out of range: " + path + " lists 2 workers (indices start at 0)"},
        Row{path, "worker", -1, std::nullopt, "--index -1: must be 0 or more"},
        Row{path, "ps", 0, std::nullopt, "--role ps: " + path + " lists no ps"},
        Row{path, "worker", 0, kTwoWorkers,
            "--role and --index say worker:0, TF_CONFIG says worker:1: " + remedy},
        Row{path, "worker", 1, ps_tf_config,
            "--cluster and TF_CONFIG list different clusters: " + path +
                " lists no ps, TF_CONFIG 1 ps; " + remedy},
        Row{path, "worker", 1, moved_tf_config,
            "--cluster and TF_CONFIG list different clusters: worker:1 is 10.0.0.4:2222 in " +
                path + ", 10.0.0.9:2222 in TF_CONFIG; " + remedy},
        Row{path, "worker", 1, "{oops", "TF_CONFIG: not valid JSON"},
    }));
    const Text& env = std::get<3>(row);
    const std::string& expected = std::get<4>(row);
    CAPTURE(expected);
    const char* env_text = env ? env->c_str() : nullptr;
    const std::string message = message_of<InputError>([&row, env_text] {
      assignment_from(std::get<0>(row), std::get<1>(row), std::get<2>(row), env_text);
    });
    CHECK_THAT(message, StartsWith(expected));
    if (env == Text("{oops")) {
      CHECK_THAT(message, Contains("; TF_CONFIG is set as well as --cluster: " + remedy));
    }
  }
}

TEST_CASE("The local launcher's cluster is on 127.0.0.1 with the given ports") {
  const ClusterSpec spec{.chiefs = 1, .workers = 2, .ps = 1};
  const ClusterAddresses cluster = loopback_cluster(spec, {5000, 5001, 5002, 5003});
  CHECK(cluster.spec().chiefs == 1);
  CHECK(cluster.spec().workers == 2);
  CHECK(cluster.spec().ps == 1);
  CHECK(cluster.of({Role::kChief, 0}) == Endpoint{"127.0.0.1", 5000});
  CHECK(cluster.of({Role::kWorker, 1}) == Endpoint{"127.0.0.1", 5002});
  CHECK(cluster.of({Role::kPs, 0}) == Endpoint{"127.0.0.1", 5003});
  for (const TaskId task : spec.tasks()) CHECK(is_loopback(cluster.of(task).host));
  CHECK_NOTHROW(check_matches(cluster, spec));

  const ClusterSpec no_chief{.chiefs = 0, .workers = 2, .ps = 0};
  CHECK(loopback_cluster(no_chief, {7000, 7001}).worker[1].port == 7001);

  CHECK_THROWS_AS(loopback_cluster(spec, {5000, 5001}), std::invalid_argument);
  CHECK_THROWS_AS(loopback_cluster(spec, {5000, 5001, 0, 5003}), std::invalid_argument);
}

TEST_CASE("Loopback hosts are told from the others") {
  const auto [host, loopback] = GENERATE(table<std::string, bool>({
      {"127.0.0.1", true},
      {"127.1.2.3", true},
      {"127.255.255.255", true},
      {"localhost", true},
      {"LocalHost", true},
      {"::1", true},
      {"[::1]", true},
      {"0:0:0:0:0:0:0:1", true},
      {"::ffff:127.0.0.1", true},
      {"10.0.0.2", false},
      {"0.0.0.0", false},
      {"126.255.255.255", false},
      {"128.0.0.1", false},
      {"::", false},
      {"::2", false},
      {"::ffff:10.0.0.1", false},
      {"1::1", false},
      {"localhost.example.com", false},
      {"127.0.0.1.nip.io", false},
      {"", false},
  }));
  CAPTURE(host);
  CHECK(is_loopback(host) == loopback);
}

TEST_CASE("Addresses that do not match the scenario's cluster name the roles that differ") {
  ClusterAddresses cluster;
  cluster.chief = {{"10.0.0.2", 2222}};
  cluster.worker = {{"10.0.0.3", 2222}, {"10.0.0.4", 2222}};
  CHECK_NOTHROW(check_matches(cluster, {.chiefs = 1, .workers = 2, .ps = 0}));
  CHECK(message_of<InputError>(
            [&] { check_matches(cluster, {.chiefs = 1, .workers = 4, .ps = 0}); }) ==
        "the cluster does not match the scenario: workers: the cluster lists 2, the scenario has "
        "4 (list one address per task of the scenario, or change the scenario's cluster, e.g. "
        "--set cluster.workers=2)");
  const std::string both =
      message_of<InputError>([&] { check_matches(cluster, {.chiefs = 0, .workers = 2, .ps = 1}); });
  CHECK_THAT(both, Contains("chiefs: the cluster lists 1, the scenario has 0; ps: the cluster "
                            "lists 0, the scenario has 1"));
  CHECK_THAT(both, Contains("--set cluster.chief=1"));
}
