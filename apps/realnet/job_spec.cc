#include "apps/realnet/job_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "apps/realnet/job_yaml.h"
#include "common/error.h"

namespace distlab::realnet {
namespace {

using strategy::Role;
using strategy::TaskId;

constexpr const char* kKinds = "compose, k8s or vertex";

// "<job>-worker-3": a task's host name in every kind that names hosts.
std::string host_of(const std::string& job, TaskId task) {
  return job + "-" + strategy::role_name(task.role) + "-" + std::to_string(task.index);
}

// TensorFlow's TF_CONFIG for `self`: every task at host:port, and its own.
std::string tf_config(const std::string& job, const strategy::ClusterSpec& spec, TaskId self,
                      int port) {
  nlohmann::ordered_json cluster = nlohmann::ordered_json::object();
  for (const TaskId task : spec.tasks()) {
    cluster[strategy::role_name(task.role)].push_back(host_of(job, task) + ":" +
                                                      std::to_string(port));
  }
  nlohmann::ordered_json config;
  config["cluster"] = cluster;
  config["task"] = {{"type", strategy::role_name(self.role)}, {"index", self.index}};
  return config.dump();
}

// The run directory's writer: the first replica (the chief, or worker 0
// of a cluster without one), as ./realnet's tasks decide.
bool writes_run_directory(const strategy::ClusterSpec& spec, TaskId task) {
  return spec.replica_rank(task) == 0;
}

// What every task runs after the image's ./realnet.
std::vector<std::string> task_arguments(const JobSpecOptions& o, const sim::MachineType& machine) {
  std::vector<std::string> args{"--scenario", o.scenario_in_image};
  for (const std::string& key : o.unsets) args.insert(args.end(), {"--unset", key});
  for (const std::string& set : o.sets) args.insert(args.end(), {"--set", set});
  // A task has its node to itself: it computes on every vCPU.
  args.insert(args.end(), {"--threads", std::to_string(std::clamp(machine.vcpus, 1, 256))});
  return args;
}

// ---- docker compose -------------------------------------------------------

std::string compose_spec(const run::Scenario& scenario, const sim::MachineCatalog& catalog,
                         const JobSpecOptions& o) {
  const strategy::ClusterSpec& spec = scenario.cluster.spec;
  const std::string runs = std::string(kImageProjectFolder) + "/runs";
  YAML::Node file;
  file["name"] = o.name;
  YAML::Node services;
  for (const TaskId task : spec.tasks()) {
    const sim::MachineType& machine = catalog.machine(scenario.cluster.machine_of(task.role));
    YAML::Node service;
    if (o.image.empty()) {
      service["build"] = o.project_folder;
      service["image"] = "distlab:" + o.name;
    } else {
      service["image"] = o.image;
    }
    service["hostname"] = host_of(o.name, task);
    std::vector<std::string> args = task_arguments(o, machine);
    if (writes_run_directory(spec, task)) {
      args.insert(args.end(), {"--out", "runs/" + o.name});
      service["volumes"].push_back("./runs:" + runs);
    }
    service["command"] = sequence_of(args);
    service["environment"]["TF_CONFIG"] = tf_config(o.name, spec, task, o.port);
    service["environment"]["DISTLAB_SECRET"] = o.secret;
    service["networks"].push_back(o.name);
    // A task that dies comes back (three times at most), as a platform's
    // restart policy brings it.
    service["restart"] = "on-failure:3";
    services[host_of(o.name, task)] = service;
  }
  file["services"] = services;
  file["networks"][o.name] = YAML::Node(YAML::NodeType::Map);
  return emitted(
      {file}, comment({
                  "docker compose: every task of " + scenario.name +
                      " on this host, on a network of its own.",
                  "  docker compose -f FILE up   (it returns once every task has ended)",
                  "The chief writes its run directory to ./runs/" + o.name + " beside this file.",
                  "This file holds the cluster's secret: keep it private.",
              }));
}

// ---- Kubernetes -----------------------------------------------------------

YAML::Node metadata(const std::string& name, const std::string& job) {
  YAML::Node meta;
  meta["name"] = name;
  meta["labels"]["app.kubernetes.io/name"] = "distlab";
  meta["labels"]["distlab/job"] = job;
  return meta;
}

// The names a Kubernetes job's objects share.
struct KubernetesNames {
  std::string secret;      // the Secret holding the cluster's secret
  std::string runs_claim;  // the claim the chief writes its run directory to
  std::string runs;        // where the claim is mounted in the chief's pod
};

// A headless Service that names the task's pod as soon as it has an
// address: its peers dial it while it starts.
YAML::Node kubernetes_service(const std::string& host, const JobSpecOptions& o) {
  YAML::Node service;
  service["apiVersion"] = "v1";
  service["kind"] = "Service";
  service["metadata"] = metadata(host, o.name);
  service["spec"]["clusterIP"] = "None";
  service["spec"]["publishNotReadyAddresses"] = plain(true);
  service["spec"]["selector"]["distlab/task"] = host;
  YAML::Node port;
  port["name"] = "distlab";
  port["port"] = plain(o.port);
  port["targetPort"] = plain(o.port);
  service["spec"]["ports"].push_back(port);
  return service;
}

// The task's Job: its pod, restarted when it fails, on a node of its
// machine type.
YAML::Node kubernetes_job(const strategy::ClusterSpec& spec, const sim::MachineType& machine,
                          const JobSpecOptions& o, TaskId task, const KubernetesNames& names) {
  const std::string host = host_of(o.name, task);
  YAML::Node container;
  container["name"] = "realnet";
  container["image"] = o.image;
  std::vector<std::string> args = task_arguments(o, machine);
  YAML::Node pod;
  if (writes_run_directory(spec, task)) {
    args.insert(args.end(), {"--out", names.runs + "/" + o.name});
    YAML::Node mount;
    mount["name"] = "runs";
    mount["mountPath"] = names.runs;
    container["volumeMounts"].push_back(mount);
    YAML::Node volume;
    volume["name"] = "runs";
    volume["persistentVolumeClaim"]["claimName"] = names.runs_claim;
    pod["volumes"].push_back(volume);
  }
  container["args"] = sequence_of(args);
  YAML::Node listen;
  listen["containerPort"] = plain(o.port);
  container["ports"].push_back(listen);
  YAML::Node tf;
  tf["name"] = "TF_CONFIG";
  tf["value"] = tf_config(o.name, spec, task, o.port);
  container["env"].push_back(tf);
  YAML::Node key;
  key["name"] = "DISTLAB_SECRET";
  key["valueFrom"]["secretKeyRef"]["name"] = names.secret;
  key["valueFrom"]["secretKeyRef"]["key"] = "secret";
  container["env"].push_back(key);
  container["resources"]["requests"]["cpu"] = std::to_string(machine.vcpus);
  container["resources"]["requests"]["memory"] =
      std::to_string(static_cast<int64_t>(machine.memory_bytes / (1024.0 * 1024.0))) + "Mi";
  if (machine.gpu_count > 0 && task.role != Role::kPs) {
    container["resources"]["limits"]["nvidia.com/gpu"] = plain(machine.gpu_count);
  }
  pod["containers"].push_back(container);
  pod["restartPolicy"] = "OnFailure";
  // The node of the scenario's machine type (GKE, EKS and AKS label
  // their nodes so).
  pod["nodeSelector"]["node.kubernetes.io/instance-type"] = machine.instance_type;

  YAML::Node job;
  job["apiVersion"] = "batch/v1";
  job["kind"] = "Job";
  job["metadata"] = metadata(host, o.name);
  job["spec"]["backoffLimit"] = plain(6);
  job["spec"]["template"]["metadata"]["labels"]["distlab/job"] = o.name;
  job["spec"]["template"]["metadata"]["labels"]["distlab/task"] = host;
  job["spec"]["template"]["spec"] = pod;
  return job;
}

std::string kubernetes_spec(const run::Scenario& scenario, const sim::MachineCatalog& catalog,
                            const JobSpecOptions& o) {
  const KubernetesNames names{.secret = o.name + "-secret",
                              .runs_claim = o.name + "-runs",
                              .runs = std::string(kImageProjectFolder) + "/runs"};
  std::vector<YAML::Node> documents;

  YAML::Node secret;
  secret["apiVersion"] = "v1";
  secret["kind"] = "Secret";
  secret["metadata"] = metadata(names.secret, o.name);
  secret["type"] = "Opaque";
  secret["stringData"]["secret"] = o.secret;
  documents.push_back(secret);

  YAML::Node claim;
  claim["apiVersion"] = "v1";
  claim["kind"] = "PersistentVolumeClaim";
  claim["metadata"] = metadata(names.runs_claim, o.name);
  claim["spec"]["accessModes"].push_back("ReadWriteOnce");
  claim["spec"]["resources"]["requests"]["storage"] = "1Gi";
  documents.push_back(claim);

  const strategy::ClusterSpec& spec = scenario.cluster.spec;
  for (const TaskId task : spec.tasks()) {
    const sim::MachineType& machine = catalog.machine(scenario.cluster.machine_of(task.role));
    documents.push_back(kubernetes_service(host_of(o.name, task), o));
    documents.push_back(kubernetes_job(spec, machine, o, task, names));
  }
  return emitted(documents,
                 comment({
                     "Kubernetes: " + scenario.name + ", one Service and one Job per task.",
                     "  kubectl apply -f FILE",
                     "The chief writes its run directory to the volume claim " + names.runs_claim +
                         " (" + names.runs + "/" + o.name + ").",
                     "This file holds the cluster's secret (the Secret " + names.secret +
                         "): keep it private.",
                 }));
}

// ---- Vertex AI ------------------------------------------------------------

// Vertex AI's name of a GPU in the catalog.
std::string vertex_accelerator(const std::string& gpu) {
  static const std::map<std::string, std::string> names = {
      {"k80", "NVIDIA_TESLA_K80"},
      {"p100", "NVIDIA_TESLA_P100"},
      {"v100", "NVIDIA_TESLA_V100"},
      {"t4", "NVIDIA_TESLA_T4"},
      {"a100-40gb", "NVIDIA_TESLA_A100"},
      {"a100-80gb", "NVIDIA_A100_80GB"},
      {"h100-sxm", "NVIDIA_H100_80GB"},
      {"h200", "NVIDIA_H200_141GB"},
      {"l4", "NVIDIA_L4"},
  };
  const auto found = names.find(gpu);
  if (found == names.end()) {
    throw InputError("--emit vertex: no Vertex AI accelerator is known for the GPU '" + gpu + "'");
  }
  return found->second;
}

YAML::Node vertex_pool(const run::Scenario& scenario, const sim::MachineCatalog& catalog,
                       const JobSpecOptions& o, Role role, int replicas,
                       const std::string& out_folder) {
  const std::string& machine_name = scenario.cluster.machine_of(role);
  const sim::MachineType& machine = catalog.machine(machine_name);
  if (machine.instance_type == "local" || machine.instance_type.starts_with("local-")) {
    throw InputError("--emit vertex: the " + std::string(strategy::role_name(role)) + " runs on '" +
                     machine_name +
                     "', this machine rather than a type Vertex AI rents: give the scenario a "
                     "cloud machine type (--set cluster.machine=n1-standard-4)");
  }
  YAML::Node pool;
  pool["machineSpec"]["machineType"] = machine.instance_type;
  if (machine.gpu_count > 0) {
    pool["machineSpec"]["acceleratorType"] = vertex_accelerator(machine.gpu);
    pool["machineSpec"]["acceleratorCount"] = plain(machine.gpu_count);
  }
  pool["replicaCount"] = plain(replicas);
  pool["containerSpec"]["imageUri"] = o.image;
  std::vector<std::string> args = task_arguments(o, machine);
  if (!out_folder.empty()) args.insert(args.end(), {"--out", out_folder});
  pool["containerSpec"]["args"] = sequence_of(args);
  YAML::Node secret;
  secret["name"] = "DISTLAB_SECRET";
  secret["value"] = o.secret;
  pool["containerSpec"]["env"].push_back(secret);
  return pool;
}

std::string vertex_spec(const run::Scenario& scenario, const sim::MachineCatalog& catalog,
                        const JobSpecOptions& o) {
  const strategy::ClusterSpec& spec = scenario.cluster.spec;
  if (spec.chiefs != 1) {
    throw InputError(
        "--emit vertex: Vertex AI's first worker pool is the chief, and this scenario has "
        "none: give it cluster.chief: 1 (--set cluster.chief=1)");
  }
  if (!o.output.starts_with("gs://") || o.output.size() <= 5) {
    throw InputError(
        "--emit vertex needs --output gs://BUCKET/FOLDER: the Cloud Storage folder the chief "
        "writes its run directory to");
  }
  std::string output = o.output;
  while (output.ends_with('/')) output.pop_back();
  // Vertex AI mounts Cloud Storage at /gcs/BUCKET (Cloud Storage FUSE).
  const std::string chief_out = "/gcs/" + output.substr(5) + "/" + o.name;
  YAML::Node job;
  job["workerPoolSpecs"].push_back(vertex_pool(scenario, catalog, o, Role::kChief, 1, chief_out));
  if (spec.workers > 0 || spec.ps > 0) {
    // An empty pool keeps the parameter servers third, where Vertex AI
    // expects them.
    job["workerPoolSpecs"].push_back(
        spec.workers > 0 ? vertex_pool(scenario, catalog, o, Role::kWorker, spec.workers, "")
                         : YAML::Node(YAML::NodeType::Map));
  }
  if (spec.ps > 0) {
    job["workerPoolSpecs"].push_back(vertex_pool(scenario, catalog, o, Role::kPs, spec.ps, ""));
  }
  job["baseOutputDirectory"]["outputUriPrefix"] = output;
  return emitted(
      {job},
      comment({
          "Vertex AI custom job: " + scenario.name + "; pools: chief, workers, parameter servers.",
          "  gcloud ai custom-jobs create --region=REGION --display-name=" + o.name +
              " --config=FILE",
          "Vertex AI gives each task its TF_CONFIG. The chief writes its run directory to " +
              output + "/" + o.name + ".",
          "This file holds the cluster's secret: keep it private.",
      }));
}

}  // namespace

JobKind job_kind(const std::string& name) {
  if (name == "compose") return JobKind::kCompose;
  if (name == "k8s" || name == "kubernetes") return JobKind::kKubernetes;
  if (name == "vertex") return JobKind::kVertex;
  throw InputError("--emit: unknown kind '" + name + "': " + kKinds);
}

const char* job_kind_name(JobKind kind) {
  switch (kind) {
    case JobKind::kCompose:
      return "compose";
    case JobKind::kKubernetes:
      return "k8s";
    case JobKind::kVertex:
      return "vertex";
  }
  return "?";
}

std::string job_name_from(const std::string& text) {
  std::string name;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      name += static_cast<char>(std::tolower(u));
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  if (name.size() > 40) name.resize(40);
  while (!name.empty() && name.back() == '-') name.pop_back();
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name.front()))) {
    name = "distlab-" + name;
  }
  while (name.back() == '-') name.pop_back();
  return name;
}

std::string job_spec(const run::Scenario& scenario, const sim::MachineCatalog& catalog,
                     const JobSpecOptions& options) {
  if (options.kind != JobKind::kCompose && options.image.empty()) {
    throw InputError(std::string("--emit ") + job_kind_name(options.kind) +
                     " needs --image: the image every task runs, pushed where the nodes pull "
                     "it (docker build -t REGISTRY/distlab . && docker push REGISTRY/distlab)");
  }
  switch (options.kind) {
    case JobKind::kCompose:
      return compose_spec(scenario, catalog, options);
    case JobKind::kKubernetes:
      return kubernetes_spec(scenario, catalog, options);
    case JobKind::kVertex:
      return vertex_spec(scenario, catalog, options);
  }
  throw InputError("--emit: unknown kind");
}

}  // namespace distlab::realnet
