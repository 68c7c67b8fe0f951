// ./realnet --emit's job descriptions (apps/realnet/job_spec.h), read back
// as the platforms read them: every task of the cluster is there once, on
// its machine type, and its TF_CONFIG names the whole cluster at the hosts
// the description gives the tasks, and the task itself.
#include "apps/realnet/job_spec.h"

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "apps/realnet/real_scenario.h"
#include "common/error.h"
#include "sim/machine.h"

namespace {

using namespace distlab;
using namespace distlab::realnet;

const std::string kSource = DISTLAB_SOURCE_DIR;

struct Emitted {
  run::Scenario scenario;
  std::vector<YAML::Node> documents;
  std::string text;
};

Emitted emit(JobKind kind, const std::string& scenario_file,
             const std::vector<run::Override>& overrides = {}, std::string image = "reg/distlab",
             std::string output = "gs://bucket/runs") {
  Emitted e{.scenario = load_real_scenario(kSource + "/scenarios/" + scenario_file, overrides)};
  JobSpecOptions o;
  o.kind = kind;
  o.scenario_in_image = "scenarios/" + scenario_file;
  o.sets = {"training.steps=20"};
  o.name = job_name_from(e.scenario.name);
  o.image = std::move(image);
  o.project_folder = kSource;
  o.secret = "0123456789";  // all digits: it must stay text
  o.output = std::move(output);
  e.text = job_spec(e.scenario, sim::MachineCatalog::load(kSource + "/scenarios/machines.yaml"), o);
  e.documents = YAML::LoadAll(e.text);
  return e;
}

std::vector<std::string> strings_of(const YAML::Node& sequence) {
  std::vector<std::string> items;
  for (const auto& item : sequence) {
    // Quoted or plain, every argument must be text to a platform: "4" and
    // not 4 (yaml-cpp tags a plain scalar "?", a quoted one "!").
    if (item.Tag() == "?") {
      char* end = nullptr;
      std::strtod(item.Scalar().c_str(), &end);
      CHECK(end != item.Scalar().c_str() + item.Scalar().size());
    }
    items.push_back(item.as<std::string>());
  }
  return items;
}

// The cluster every TF_CONFIG must describe: host:port of each task by
// role, as the description names the hosts.
std::map<std::string, std::vector<std::string>> expected_cluster(const strategy::ClusterSpec& spec,
                                                                 const std::string& job) {
  std::map<std::string, std::vector<std::string>> cluster;
  for (const strategy::TaskId task : spec.tasks()) {
    cluster[strategy::role_name(task.role)].push_back(job + "-" + strategy::role_name(task.role) +
                                                      "-" + std::to_string(task.index) + ":2222");
  }
  return cluster;
}

// Checks a task's TF_CONFIG; returns the task it names ("worker-2").
std::string check_tf_config(const std::string& text, const strategy::ClusterSpec& spec,
                            const std::string& job) {
  const auto config = nlohmann::json::parse(text);
  CHECK(config.at("cluster").get<std::map<std::string, std::vector<std::string>>>() ==
        expected_cluster(spec, job));
  return config.at("task").at("type").get<std::string>() + "-" +
         std::to_string(config.at("task").at("index").get<int>());
}

std::set<std::string> every_task(const strategy::ClusterSpec& spec) {
  std::set<std::string> names;
  for (const strategy::TaskId task : spec.tasks()) {
    names.insert(std::string(strategy::role_name(task.role)) + "-" + std::to_string(task.index));
  }
  return names;
}

bool has_pair(const std::vector<std::string>& args, const std::string& key,
              const std::string& value) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == key && args[i + 1] == value) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a compose job runs every task on one network with its own TF_CONFIG") {
  const Emitted e = emit(JobKind::kCompose, "ps_4workers.yaml", {}, "");
  const strategy::ClusterSpec& spec = e.scenario.cluster.spec;
  REQUIRE(e.documents.size() == 1);
  const YAML::Node& file = e.documents[0];
  CHECK(file["name"].as<std::string>() == "ps-4workers");
  REQUIRE(file["services"].size() == 6);
  std::set<std::string> tasks;
  for (const auto& entry : file["services"]) {
    const std::string host = entry.first.as<std::string>();
    const YAML::Node& service = entry.second;
    CAPTURE(host);
    CHECK(service["hostname"].as<std::string>() == host);
    CHECK(service["restart"].as<std::string>() == "on-failure:3");
    CHECK(service["build"].as<std::string>() == kSource);
    CHECK(service["networks"][0].as<std::string>() == "ps-4workers");
    CHECK(file["networks"]["ps-4workers"].IsDefined());
    CHECK(service["environment"]["DISTLAB_SECRET"].as<std::string>() == "0123456789");
    CHECK(service["environment"]["DISTLAB_SECRET"].Tag() == "!");  // quoted: text
    const std::string task =
        check_tf_config(service["environment"]["TF_CONFIG"].as<std::string>(), spec, "ps-4workers");
    CHECK(host == "ps-4workers-" + task);
    tasks.insert(task);
    const std::vector<std::string> args = strings_of(service["command"]);
    CHECK(has_pair(args, "--scenario", "scenarios/ps_4workers.yaml"));
    CHECK(has_pair(args, "--set", "training.steps=20"));
    CHECK(has_pair(args, "--threads", "4"));  // n1-standard-4's vCPUs
    // The chief alone writes the run directory, into ./runs on the host.
    CHECK(has_pair(args, "--out", "runs/ps-4workers") == (task == "chief-0"));
    CHECK(service["volumes"].IsDefined() == (task == "chief-0"));
  }
  CHECK(tasks == every_task(spec));
}

TEST_CASE("a Kubernetes job has a Service and a Job per task, and the secret from a Secret") {
  const Emitted e = emit(JobKind::kKubernetes, "ps_4workers.yaml");
  const strategy::ClusterSpec& spec = e.scenario.cluster.spec;
  std::map<std::string, std::vector<YAML::Node>> by_kind;
  for (const YAML::Node& document : e.documents) {
    by_kind[document["kind"].as<std::string>()].push_back(document);
  }
  REQUIRE(by_kind["Secret"].size() == 1);
  const YAML::Node& secret = by_kind["Secret"][0];
  CHECK(secret["stringData"]["secret"].as<std::string>() == "0123456789");
  REQUIRE(by_kind["PersistentVolumeClaim"].size() == 1);
  REQUIRE(by_kind["Service"].size() == 6);
  REQUIRE(by_kind["Job"].size() == 6);

  std::map<std::string, std::string> selected;  // service name -> the task label it selects
  for (const YAML::Node& service : by_kind["Service"]) {
    CHECK(service["spec"]["ports"][0]["port"].as<int>() == 2222);
    CHECK(service["spec"]["clusterIP"].as<std::string>() == "None");
    selected[service["metadata"]["name"].as<std::string>()] =
        service["spec"]["selector"]["distlab/task"].as<std::string>();
  }
  std::set<std::string> tasks;
  for (const YAML::Node& job : by_kind["Job"]) {
    const std::string name = job["metadata"]["name"].as<std::string>();
    CAPTURE(name);
    const YAML::Node& pod = job["spec"]["template"]["spec"];
    // The Service of the same name selects this Job's pod.
    CHECK(selected.at(name) ==
          job["spec"]["template"]["metadata"]["labels"]["distlab/task"].as<std::string>());
    CHECK(pod["restartPolicy"].as<std::string>() == "OnFailure");
    CHECK(pod["nodeSelector"]["node.kubernetes.io/instance-type"].as<std::string>() ==
          "n1-standard-4");
    const YAML::Node& container = pod["containers"][0];
    CHECK(container["image"].as<std::string>() == "reg/distlab");
    std::map<std::string, YAML::Node> env;
    for (const auto& variable : container["env"])
      env[variable["name"].as<std::string>()] = YAML::Node(variable);
    const std::string task =
        check_tf_config(env.at("TF_CONFIG")["value"].as<std::string>(), spec, "ps-4workers");
    CHECK(name == "ps-4workers-" + task);
    tasks.insert(task);
    CHECK(env.at("DISTLAB_SECRET")["valueFrom"]["secretKeyRef"]["name"].as<std::string>() ==
          secret["metadata"]["name"].as<std::string>());
    const std::vector<std::string> args = strings_of(container["args"]);
    CHECK(has_pair(args, "--out", "/opt/distlab/runs/ps-4workers") == (task == "chief-0"));
    CHECK(pod["volumes"].IsDefined() == (task == "chief-0"));
  }
  CHECK(tasks == every_task(spec));
}

TEST_CASE("a Vertex AI job has pools for chief, workers and servers on the scenario's machines") {
  const Emitted e = emit(JobKind::kVertex, "ps_4workers.yaml");
  REQUIRE(e.documents.size() == 1);
  const YAML::Node& pools = e.documents[0]["workerPoolSpecs"];
  REQUIRE(pools.size() == 3);
  const int replicas[] = {1, 4, 1};
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(pools[k]["replicaCount"].as<int>() == replicas[k]);
    CHECK(pools[k]["machineSpec"]["machineType"].as<std::string>() == "n1-standard-4");
    CHECK_FALSE(pools[k]["machineSpec"]["acceleratorType"].IsDefined());
    CHECK(pools[k]["containerSpec"]["imageUri"].as<std::string>() == "reg/distlab");
    const std::vector<std::string> args = strings_of(pools[k]["containerSpec"]["args"]);
    CHECK(has_pair(args, "--out", "/gcs/bucket/runs/ps-4workers") == (k == 0));
  }
  CHECK(e.documents[0]["baseOutputDirectory"]["outputUriPrefix"].as<std::string>() ==
        "gs://bucket/runs");
}

TEST_CASE("GPU machines rent their base type with its accelerators and servers ask for none") {
  const std::vector<run::Override> gpus = {{"cluster.machine", "complex_model_m_gpu"}};
  const Emitted vertex = emit(JobKind::kVertex, "ps_4workers.yaml", gpus);
  const YAML::Node& chief = vertex.documents[0]["workerPoolSpecs"][0]["machineSpec"];
  CHECK(chief["machineType"].as<std::string>() == "n1-standard-16");
  CHECK(chief["acceleratorType"].as<std::string>() == "NVIDIA_TESLA_K80");
  CHECK(chief["acceleratorCount"].as<int>() == 4);

  const Emitted k8s = emit(JobKind::kKubernetes, "ps_4workers.yaml", gpus);
  for (const YAML::Node& document : k8s.documents) {
    if (document["kind"].as<std::string>() != "Job") continue;
    const std::string name = document["metadata"]["name"].as<std::string>();
    const YAML::Node limits =
        document["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
    CAPTURE(name);
    CHECK(limits.IsDefined() == (name != "ps-4workers-ps-0"));
    if (limits.IsDefined()) CHECK(limits["nvidia.com/gpu"].as<int>() == 4);
  }
}

TEST_CASE("what a kind cannot describe is refused with what to give") {
  CHECK_THROWS_WITH(emit(JobKind::kKubernetes, "ps_4workers.yaml", {}, ""),
                    Catch::Contains("needs --image"));
  CHECK_THROWS_WITH(emit(JobKind::kVertex, "ps_4workers.yaml", {}, "reg/distlab", ""),
                    Catch::Contains("--output gs://BUCKET/FOLDER"));
  CHECK_THROWS_WITH(emit(JobKind::kVertex, "ps_4workers.yaml", {{"cluster.chief", "0"}}),
                    Catch::Contains("chief: 1"));
  CHECK_THROWS_WITH(emit(JobKind::kVertex, "ps_4workers.yaml", {{"cluster.machine", "local"}}),
                    Catch::Contains("this machine rather than a type Vertex AI rents"));
  CHECK_THROWS_WITH(job_kind("swarm"), Catch::Contains("compose, k8s or vertex"));
}

TEST_CASE("job names are DNS labels made from the scenario's name") {
  CHECK(job_name_from("ps_4workers") == "ps-4workers");
  CHECK(job_name_from("Mnist CNN (sync)") == "mnist-cnn-sync");
  CHECK(job_name_from("4workers") == "distlab-4workers");
  CHECK(job_name_from(std::string(60, 'a')).size() == 40);
}
