// Ready-to-submit descriptions of a scenario's cluster on real nodes
// (./realnet --emit): every task runs the project's image with ./realnet,
// and learns the cluster and its own task from TF_CONFIG and the cluster's
// secret from DISTLAB_SECRET, as the labs' TensorFlow jobs did.
//   compose  docker compose: every task a service of one host, on a network
//            of their own; the chief's run directory lands in ./runs beside
//            the file. What a user runs today to check a job before paying.
//   k8s      Kubernetes: a Secret, and per task a Service and a Job (its
//            restarts are the platform's restart policy); the chief's run
//            directory on a PersistentVolumeClaim.
//   vertex   a Vertex AI custom job (gcloud ai custom-jobs create --config):
//            worker pools for chief, workers and parameter servers, with the
//            scenario's machine types; Vertex AI sets TF_CONFIG itself, and
//            the chief writes its run directory to Cloud Storage.
#pragma once

#include <string>
#include <vector>

#include "run/scenario.h"
#include "sim/machine.h"

namespace distlab::realnet {

enum class JobKind { kCompose, kKubernetes, kVertex };
JobKind job_kind(const std::string& name);  // throws InputError naming the kinds
const char* job_kind_name(JobKind kind);

struct JobSpecOptions {
  JobKind kind = JobKind::kCompose;
  // The scenario as the image holds it: its path from the project folder
  // (COPY . . in the Dockerfile), and the command line's edits of it.
  std::string scenario_in_image;
  std::vector<std::string> sets;    // --set KEY=VALUE texts
  std::vector<std::string> unsets;  // --unset KEY texts
  std::string name;                 // the job's name: services, pods, run directory
  // The image every task runs; empty for compose, which builds the
  // project's Dockerfile from `project_folder`.
  std::string image;
  std::string project_folder;
  std::string secret;  // the cluster's shared secret (k8s: in its Secret; vertex: in the env)
  std::string output;  // vertex: gs://BUCKET/PATH, where the run directory goes
  int port = 2222;
};

// Where the image keeps the project (the Dockerfile's WORKDIR).
inline constexpr const char* kImageProjectFolder = "/opt/distlab";

// The description, as the text of a file. Throws InputError for what the
// kind cannot describe (a machine type Vertex AI does not rent, a vertex
// job without its output folder).
std::string job_spec(const run::Scenario& scenario, const sim::MachineCatalog& catalog,
                     const JobSpecOptions& options);

// A name Kubernetes and compose accept for the job (lower-case letters,
// digits and '-', at most 40 characters so that "<name>-worker-NNN" fits
// in a DNS label) made from `text` (the scenario's file name).
std::string job_name_from(const std::string& text);

}  // namespace distlab::realnet
