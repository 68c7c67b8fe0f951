// ./simulate: runs a scenario in a SimGrid-simulated cluster and leaves a run
// directory (summary.json, steps.csv, curve.csv, timeline.json, scenario.yaml,
// and in full fidelity the final weights, model.safetensors).
#include <CLI/CLI.hpp>

#include "apps/simulate/simulate_command.h"
#include "common/cli.h"
#include "nn/kernels/kernels.h"
#include "run/provenance.h"

namespace {

using namespace distlab;
using simulate::Options;

void add_options(CLI::App& app, Options& o) {
  app.add_option("scenario", o.scenario, "scenario file (YAML), e.g. scenarios/ps_4workers.yaml")
      ->required();
  app.add_option("--set", o.sets,
                 "override a scenario value, KEY=VALUE with a dotted key (repeatable),\n"
                 "e.g. --set cluster.workers=8 --set network.latency_us=100;\n"
                 "--set strategy.name=X also drops or adjusts what X does not take, with a note;\n"
                 "--set training.steps=N replaces the file's epochs (and the other way round)");
  app.add_option("--unset", o.unsets,
                 "remove a scenario key (repeatable), e.g. --unset checkpoint;\n"
                 "removals come before every --set");
  app.add_option("--fidelity", o.fidelity, "full or timing (default: the scenario's)")
      ->check(CLI::IsMember({"full", "timing"}));
  app.add_option("--seed", o.seed, "seed of weights, shuffling and data (default: the scenario's)");
  app.add_option("--out", o.out,
                 "run directory (default: runs/<scenario>-<time>/): a new or empty folder, or\n"
                 "the one --resume names, which the run then continues in place");
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "write a checkpoint every STEPS steps (sets checkpoint.every_steps)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--resume", o.resume,
                 "go on from a checkpoint: a run directory (its newest valid one) or a file");
  app.add_option("--threads", o.threads, "compute threads for the real math")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--machines", o.machines,
                 "machine catalog, then overlays whose entries replace its own (repeatable;\n"
                 "default: scenarios/machines.yaml, then scenarios/machines.local.yaml\n"
                 "when ./calibrate has written it, from $DISTLAB_HOME, else from an\n"
                 "installed copy's share/distlab, else from the source tree)");
  app.add_option("--calibrate-from", o.calibrate_from,
                 "a real run directory of the same model (./realnet): simulate its scenario,\n"
                 "set each phase's real CPU time against the simulated one, and charge this\n"
                 "scenario's work at the measured costs (repeatable: the runs are pooled)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--no-profile", o.no_profile,
               "on machine local, charge the model's costs even where ./calibrate --scenario\n"
               "has measured the scenario's model here");
  app.add_flag("--quiet", o.quiet, "no progress display, table or messages");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app(
      "Simulates a scenario on a SimGrid cluster: every task (chief, worker, ps) is an actor\n"
      "on a simulated host of the scenario's machine type, joined by simulated links.\n"
      "Writes summary.json, steps.csv, curve.csv, timeline.json, scenario.yaml and (full\n"
      "fidelity) the final weights, model.safetensors, to the run directory.");
  app.name("./simulate");
  app.footer(
      "Examples:\n"
      "  ./simulate scenarios/ps_4workers.yaml\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --set training.epochs=2 --seed 3\n"
      "  ./simulate scenarios/timing_1024_workers.yaml --set cluster.workers=255\n"
      "  ./simulate scenarios/ps_4workers.yaml --set strategy.name=allreduce\n"
      "  ./simulate scenarios/cifar10_mlp_sync.yaml --fidelity timing --out runs/mlp\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --checkpoint-every 100 --out runs/a\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --resume runs/a --out runs/a --set "
      "training.epochs=2\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --set cluster.machine=local \\\n"
      "             --set cluster.placement=one_host\n"
      "  ./simulate scenarios/mnist_cnn_sync.yaml --set cluster.workers=7 \\\n"
      "             --calibrate-from runs/real-2-tasks\n"
      "Placement: per_task gives each task a host of the machine type; one_host puts every\n"
      "task on one machine, sharing its cores, as ./realnet --launch does (machine local:\n"
      "run ./calibrate first to measure this machine).\n"
      "Measured costs: --calibrate-from DIR takes a real run of the same model (./realnet\n"
      "--launch here, or --role on real nodes), simulates its scenario as it was placed,\n"
      "and scales each phase's work (forward, backward, optimizer, packing, evaluation,\n"
      "messages' CPU; replicas and parameter servers apart) by real CPU / simulated CPU:\n"
      "what two real nodes measured predicts sixteen. summary.json keeps the factors.\n"
      "On machine local with one_host placement, the runs ./calibrate --scenario made of\n"
      "the scenario's model (its profile) are used so, unless --no-profile.\n"
      "Batch: training.batch_size is the global batch of allreduce and mirrored, split\n"
      "among the replicas as Keras splits it (128 over 3: 43 + 43 + 42), and each\n"
      "parameter-server worker's own batch.\n"
      "Fidelity: full runs the real math in every task (losses, accuracy, weights);\n"
      "timing skips it and keeps message sizes and compute times exact.\n"
      "Checkpoints: the chief writes <run directory>/checkpoints/step-N.safetensors every\n"
      "checkpoint.every_steps steps or every_seconds simulated seconds, and at the end;\n"
      "--resume trains on from the newest valid one up to the scenario's total.\n"
      "Input: a scenario's input_pipeline (per-example stages on the host's CPU, e.g.\n"
      "mirrored_4gpu.yaml) makes a replica wait when its step is quicker than its input;\n"
      "--set input_pipeline.preprocessed=true leaves out the stages done offline.\n"
      "Exit status: 0 done, 1 the run failed, 2 bad input (scenario, option, data).\n" +
      distlab::nn::kernels::isa_help());
  add_options(app, o);
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  o.command = run::shell_command(argc, argv);
  return run_reporting_errors([&] {
    distlab::nn::kernels::kernels();  // a wrong DISTLAB_ISA is refused before any work
    return simulate::simulate_command(o);
  });
}
