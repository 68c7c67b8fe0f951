// Scenarios load with their defaults and overrides, and broken ones are
// refused with the file, the line (or the --set override) and the key.
#include "run/scenario.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "sim/machine.h"
#include "support/error_message.h"

using namespace distlab::run;
using distlab::ConfigError;
using distlab::InputError;
using distlab::strategy::Fidelity;
using distlab::strategy::PsMode;
using distlab::strategy::Role;
using distlab::strategy::StrategyKind;
using distlab::testing::message_of;

namespace {

namespace fs = std::filesystem;

const fs::path kSource = DISTLAB_SOURCE_DIR;

// A fresh folder holding models/mnist_cnn.yaml, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    static int count = 0;
    path_ = fs::temp_directory_path() /
            ("distlab-scenario-" + std::to_string(::getpid()) + "-" + std::to_string(++count));
    fs::remove_all(path_);
    fs::create_directories(path_ / "models");
    fs::copy_file(kSource / "scenarios/models/mnist_cnn.yaml", path_ / "models/mnist_cnn.yaml");
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    std::ofstream(file) << text;
    return file.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const std::vector<std::string>& shipped_machine_types() {
  static const std::vector<std::string> names =
      distlab::sim::MachineCatalog::load_default().machine_names();
  return names;
}

const char* kFull =
    "description: Chicago taxi tips, asynchronous parameter server\n"
    "model: models/mnist_cnn.yaml\n"
    "data: synthetic:2000\n"
    "seed: 7\n"
    "fidelity: timing\n"
    "cluster:\n"
    "  machine: n1-standard-4\n"
    "  chief: 1\n"
    "  workers: 4\n"
    "  ps: 2\n"
    "  ps_machine: n1-highmem-8\n"
    "strategy:\n"
    "  name: parameter_server\n"
    "  mode: sync\n"
    "  gradient_dtype: bfloat16\n"
    "training:\n"
    "  batch_size: 64\n"
    "  precision: mixed_float16\n"
    "  steps: 500\n"
    "  eval_every: 100\n"
    "  eval_examples: 2000\n"
    "  train_examples: 1000\n"
    "network:\n"
    "  latency_us: 20\n"
    "  bandwidth_gbps: 10\n"
    "  model: lv08\n";

const char* kMinimal =
    "model: models/mnist_cnn.yaml\n"
    "cluster:\n"
    "  machine: n1-standard-4\n"
    "strategy:\n"
    "  name: local\n";

}  // namespace

TEST_CASE("A full scenario is read with every value") {
  const TempDir dir;
  const std::string path = dir.write("taxi_ps.yaml", kFull);
  const Scenario s = load_scenario(path);
  CHECK(s.path == path);
  CHECK(s.name == "taxi_ps");
  CHECK(s.description == "Chicago taxi tips, asynchronous parameter server");
  CHECK(s.text == kFull);
  CHECK(fs::equivalent(s.model_path, dir.path() / "models/mnist_cnn.yaml"));
  CHECK(s.data == "synthetic:2000");
  CHECK(s.seed == 7);
  CHECK(s.fidelity == Fidelity::kTiming);
  CHECK(s.cluster.spec.chiefs == 1);
  CHECK(s.cluster.spec.workers == 4);
  CHECK(s.cluster.spec.ps == 2);
  CHECK(s.cluster.machine_of(Role::kChief) == "n1-standard-4");
  CHECK(s.cluster.machine_of(Role::kWorker) == "n1-standard-4");
  CHECK(s.cluster.machine_of(Role::kPs) == "n1-highmem-8");
  CHECK(s.strategy.kind == StrategyKind::kParameterServer);
  CHECK(s.strategy.mode == PsMode::kSync);
  CHECK(s.strategy.gradient_type == distlab::strategy::GradientType::kBFloat16);
  CHECK(s.training.batch_size == 64);
  CHECK(s.training.precision == distlab::strategy::Precision::kFloat16);
  CHECK(s.training.steps == 500);
  CHECK(s.training.eval_every == 100);
  CHECK(s.training.eval_examples == 2000);
  CHECK(s.training.train_examples == 1000);
  CHECK(s.network.latency_seconds == Approx(20e-6));
  CHECK(s.network.bandwidth == Approx(10e9 / 8));
  CHECK(s.network.model == NetworkModel::kLv08);
}

TEST_CASE("A minimal scenario takes the defaults") {
  const TempDir dir;
  const Scenario s = load_scenario(dir.write("minimal.yaml", kMinimal));
  CHECK(s.name == "minimal");
  CHECK(s.description.empty());
  CHECK(s.data == "fashion-mnist");
  CHECK(s.seed == 0);
  CHECK(s.fidelity == Fidelity::kFull);
  CHECK(s.cluster.spec.chiefs == 1);
  CHECK(s.cluster.spec.workers == 0);
  CHECK(s.cluster.spec.ps == 0);
  for (Role role : {Role::kChief, Role::kWorker, Role::kPs}) {
    CHECK(s.cluster.machine_of(role) == "n1-standard-4");
  }
  CHECK(s.strategy.kind == StrategyKind::kLocal);
  CHECK(s.strategy.gradient_type == distlab::strategy::GradientType::kFloat32);
  CHECK(s.training.batch_size == 0);
  CHECK(s.training.precision == distlab::strategy::Precision::kFloat32);
  CHECK(s.training.epochs == 1);
  CHECK(s.training.steps == 0);
  CHECK(s.network.latency_seconds == Approx(50e-6));
  CHECK(s.network.bandwidth == 0);
  CHECK(s.network.model == NetworkModel::kCm02);
}

TEST_CASE("Each strategy takes the clusters it can run on") {
  const TempDir dir;
  auto load = [&](const std::string& cluster, const std::string& strategy) {
    return load_scenario(
        dir.write("s.yaml", "model: models/mnist_cnn.yaml\ncluster: {machine: m, " + cluster +
                                "}\nstrategy: {" + strategy + "}\n"));
  };
  CHECK(load("chief: 0, workers: 1", "name: local").cluster.spec.replicas() == 1);
  CHECK(load("workers: 1", "name: allreduce, bucket_bytes: 4096").strategy.bucket_bytes == 4096);
  CHECK(load("chief: 0, workers: 3", "name: allreduce").cluster.spec.replicas() == 3);
  CHECK(load("workers: 1", "name: allreduce").strategy.segment_bytes == 1 << 20);
  CHECK(load("workers: 1", "name: allreduce, segment_bytes: 0").strategy.segment_bytes == 0);
  CHECK(load("", "name: mirrored, segment_bytes: 4096").strategy.segment_bytes == 4096);
  const auto ps = load("workers: 4, ps: 1", "name: parameter_server");
  CHECK(ps.strategy.mode == PsMode::kAsync);
  const auto mirrored = load("chief: 1", "name: mirrored, devices: 4");
  CHECK(mirrored.strategy.kind == StrategyKind::kMirrored);
  CHECK(mirrored.strategy.devices == 4);
  CHECK(load("", "name: mirrored").strategy.devices == 0);
  CHECK(message_of<ConfigError>([&] {
          load("chief: 0", "name: mirrored");
        }).find("cluster.chief: strategy mirrored needs chief: 1, this cluster has 0") !=
        std::string::npos);
  CHECK(message_of<ConfigError>([&] {
          load("", "name: mirrored, devices: -1");
        }).find("strategy.devices: must be between 0 and") != std::string::npos);
  CHECK(message_of<ConfigError>([&] {
          load("ps: 1", "name: local");
        }).find("cluster.ps: strategy local has no parameter servers") != std::string::npos);
  CHECK(message_of<ConfigError>([&] {
          load("ps: 1", "name: mirrored");
        }).find("cluster.ps: strategy mirrored has no parameter servers") != std::string::npos);
  CHECK(message_of<ConfigError>([&] { load("", "name: local, bucket_bytes: 10"); })
            .find("strategy.bucket_bytes: strategy local takes no bucket_bytes (bucket_bytes is "
                  "for allreduce and mirrored)") != std::string::npos);
  CHECK(message_of<ConfigError>([&] { load("", "name: local, segment_bytes: 4096"); })
            .find("strategy.segment_bytes: strategy local takes no segment_bytes (segment_bytes is "
                  "for allreduce and parameter_server and mirrored)") != std::string::npos);
  CHECK(message_of<ConfigError>([&] {
          load("workers: 1", "name: allreduce, segment_bytes: 3");
        }).find("strategy.segment_bytes: a segment must hold at least one float") !=
        std::string::npos);
  CHECK(message_of<ConfigError>([&] { load("chief: 0, ps: 1", "name: parameter_server"); })
            .find("cluster: strategy parameter_server needs at least 1 replica, a chief or "
                  "workers; this cluster has 0") != std::string::npos);
}

TEST_CASE("Overrides change values and add keys before the checks") {
  const TempDir dir;
  const std::string path = dir.write("minimal.yaml", kMinimal);
  const Scenario s = load_scenario(
      path, {parse_override("training.epochs=3"), parse_override("network.latency_us=10"),
             parse_override("cluster.workers=1"), parse_override("strategy.name=allreduce"),
             parse_override("description=a b=c")});
  CHECK(s.training.epochs == 3);
  CHECK(s.network.latency_seconds == Approx(10e-6));
  CHECK(s.cluster.spec.workers == 1);
  CHECK(s.strategy.kind == StrategyKind::kAllReduce);
  CHECK(s.description == "a b=c");

  // The text carries the overrides: read back, it gives the same scenario.
  const Scenario again = load_scenario(dir.write("again.yaml", s.text));
  CHECK(again.training.epochs == 3);
  CHECK(again.network.latency_seconds == Approx(10e-6));
  CHECK(again.cluster.spec.workers == 1);
  CHECK(again.strategy.kind == StrategyKind::kAllReduce);
  CHECK(again.description == "a b=c");

  // A later override of the same key wins; `training:` alone takes keys.
  const std::string empty_section = dir.write("empty.yaml", std::string(kMinimal) + "training:\n");
  const Scenario later = load_scenario(
      empty_section, {parse_override("training.steps=5"), parse_override("training.steps=9")});
  CHECK(later.training.steps == 9);
}

TEST_CASE("A bad value set by an override names the override") {
  const TempDir dir;
  const std::string path = dir.write("minimal.yaml", kMinimal);
  auto error = [&](const std::string& text) {
    return message_of<ConfigError>([&] { load_scenario(path, {parse_override(text)}); });
  };
  CHECK(error("training.epochs=abc") ==
        path +
            ": training.epochs: expected an integer, got 'abc' (set by --set "
            "training.epochs=abc)");
  CHECK(error("strategy.name=ring") ==
        path +
            ": strategy.name: unknown value 'ring' (set by --set strategy.name=ring; one of: "
            "local, allreduce, parameter_server, mirrored)");
  CHECK(error("training.epoch=2") ==
        path +
            ": training.epoch: unknown key (set by --set training.epoch=2; did you mean "
            "'epochs'?)");
  CHECK(error("netwrok.latency_us=2") ==
        path +
            ": netwrok: unknown key (set by --set netwrok.latency_us=2; did you mean "
            "'network'?)");
  CHECK(error("cluster.ps=1") ==
        path +
            ": cluster.ps: strategy local has no parameter servers (set by --set cluster.ps=1; "
            "use chief: 1 and workers: 0 (or chief: 0 and workers: 1), ps: 0)");
  // A path through a value of the file points at that value's line.
  CHECK(error("cluster.machine.type=x") ==
        path +
            ":3: cluster.machine: is not a mapping (--set cluster.machine.type=x "
            "cannot set a key inside it)");
  // An error elsewhere in the file still points at its line.
  const std::string broken = dir.write("broken.yaml", std::string(kMinimal) + "seed: -1\n");
  CHECK(message_of<ConfigError>([&] {
          load_scenario(broken, {parse_override("seed=3"), parse_override("training.epochs=2")});
        }).empty());
  CHECK(message_of<ConfigError>([&] {
          load_scenario(broken, {parse_override("training.epochs=2")});
        }) == broken + ":6: seed: must be between 0 and 9223372036854775807, got -1");
}

TEST_CASE("Malformed overrides are input errors") {
  const Override o = parse_override("cluster.ps_machine=n1-highmem-8");
  CHECK(o.key == "cluster.ps_machine");
  CHECK(o.value == "n1-highmem-8");
  CHECK(parse_override("description=").value.empty());
  for (const char* bad : {"training.epochs", "=2", ".epochs=2", "training.=2", "a..b=1", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_override(bad), InputError);
  }
  CHECK_THROWS_WITH(parse_override("training.epochs"),
                    Catch::Matchers::Contains("--set training.epochs: expected KEY=VALUE"));
  // An override built without parse_override is checked too.
  const TempDir dir;
  const std::string path = dir.write("minimal.yaml", kMinimal);
  CHECK_THROWS_AS(load_scenario(path, {Override{"training..epochs", "2"}}), InputError);
}

TEST_CASE("A missing scenario file is a config error") {
  CHECK(message_of<ConfigError>([] { load_scenario("/nonexistent/s.yaml"); }) ==
        "/nonexistent/s.yaml: cannot open the file");
  const TempDir dir;
  CHECK(message_of<ConfigError>([&] {
          load_scenario(dir.path().string());
        }).find("is a folder, not a scenario file") != std::string::npos);
}

TEST_CASE("Broken scenarios are refused with file, line and key") {
  // Every file of the corpus starts with "# expect: <part of the message>".
  const fs::path folder = kSource / "tests/run/bad_scenarios";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 12);
  const std::string prefix = "# expect: ";
  for (const auto& file : files) {
    CAPTURE(file.string());
    std::ifstream in(file);
    std::string first;
    std::getline(in, first);
    REQUIRE(first.starts_with(prefix));
    const std::string expected = first.substr(prefix.size());
    // Checked as ./simulate checks them: with the shipped machine catalog.
    const std::string message =
        message_of<ConfigError>([&] { load_scenario(file.string(), {}, shipped_machine_types()); });
    CAPTURE(message);
    CHECK(message.starts_with(folder.string() + "/"));
    CHECK(message.find(expected) != std::string::npos);
  }
}

TEST_CASE("Machine types are checked against the backend's catalog when one is given") {
  const TempDir dir;
  const std::string path = dir.write("machines.yaml", kFull);
  const std::vector<std::string> catalog = {"n1-standard-4", "n1-standard-8", "n1-highmem-8"};
  CHECK(load_scenario(path, {}, catalog).cluster.ps_machine == "n1-highmem-8");
  // Without a catalog any name passes (./realnet runs on what it has).
  CHECK(load_scenario(path, {{"cluster.machine", "n1-standard-5"}}).cluster.chief_machine ==
        "n1-standard-5");
  const std::string wrong = message_of<ConfigError>([&] {
    load_scenario(path, {{"cluster.ps_machine", "n1-highmem-16"}}, catalog);
  });
  CHECK_THAT(wrong, Catch::Contains("cluster.ps_machine: unknown machine type 'n1-highmem-16'"));
  CHECK_THAT(wrong, Catch::Contains("did you mean 'n1-highmem-8'"));
  const std::string in_file = message_of<ConfigError>([&] {
    load_scenario(dir.write("typo.yaml", std::string(kMinimal) + ""), {}, {"n1-standard-8"});
  });
  CHECK_THAT(in_file, Catch::Contains("typo.yaml:3: cluster.machine: unknown machine type"));
}

TEST_CASE("Checkpoints, faults and recovery are read, with defaults") {
  const TempDir dir;
  const Scenario plain = load_scenario(dir.write("plain.yaml", kFull));
  CHECK_FALSE(plain.checkpoint.enabled());
  CHECK(plain.checkpoint.keep == 3);
  CHECK(plain.faults.empty());
  CHECK(plain.recovery.max_restarts == 6);
  CHECK(plain.recovery.detect_seconds == 5);

  const std::string path = dir.write(
      "faulty.yaml", std::string(kFull) +
                         "checkpoint: {every_steps: 500, every_seconds: 30, keep: 2}\n"
                         "faults:\n"
                         "  - {task: worker:1, at_step: 300}\n"
                         "  - {task: ps:0, at_seconds: 20}\n"
                         "  - {machine: n1-highmem-8, mtbf_hours: 2}\n"
                         "  - {mtbf_hours: 24}\n"
                         "recovery: {max_restarts: 3, detect_seconds: 1, restart_seconds: 60}\n");
  const Scenario s = load_scenario(path, {}, shipped_machine_types());
  CHECK(s.checkpoint.every_steps == 500);
  CHECK(s.checkpoint.every_seconds == 30);
  CHECK(s.checkpoint.keep == 2);
  REQUIRE(s.faults.size() == 4);
  CHECK(*s.faults[0].task == distlab::strategy::TaskId{Role::kWorker, 1});
  CHECK(s.faults[0].at_step == 300);
  CHECK(s.faults[1].at_seconds == 20);
  CHECK(s.faults[2].mtbf_seconds == 7200);
  CHECK(s.faults[2].strikes({Role::kPs, 1}, "n1-highmem-8"));
  CHECK_FALSE(s.faults[2].strikes({Role::kWorker, 0}, "n1-standard-4"));
  CHECK(s.faults[3].strikes({Role::kChief, 0}, "n1-standard-4"));
  CHECK(s.recovery.max_restarts == 3);
  CHECK(s.recovery.restart_seconds == 60);

  // A list given on the command line.
  const Scenario set = load_scenario(dir.write("set.yaml", kFull),
                                     {parse_override("faults=[{task: chief, at_step: 5}]")});
  REQUIRE(set.faults.size() == 1);
  CHECK(*set.faults[0].task == distlab::strategy::TaskId{Role::kChief, 0});
}

TEST_CASE("Broken faults are refused with the entry's key") {
  const TempDir dir;
  auto error = [&](const std::string& faults) {
    return message_of<ConfigError>([&] {
      load_scenario(dir.write("f.yaml", std::string(kFull) + "faults:\n  - " + faults + "\n"), {},
                    shipped_machine_types());
    });
  };
  CHECK_THAT(error("{task: worker:9, at_step: 3}"),
             Catch::Contains("faults[0].task: the cluster has no task worker:9"));
  CHECK_THAT(error("{task: boss:1, at_step: 3}"), Catch::Contains("'boss:1' is not a task"));
  CHECK_THAT(error("{task: worker:1}"), Catch::Contains("give exactly one of at_step"));
  CHECK_THAT(error("{task: worker:1, at_step: 3, mtbf_hours: 1}"),
             Catch::Contains("give exactly one of at_step"));
  CHECK_THAT(error("{at_step: 3}"), Catch::Contains("at_step needs a task"));
  CHECK_THAT(error("{machine: n1-standard-4, at_seconds: 3}"),
             Catch::Contains("fail by mtbf_hours only"));
  CHECK_THAT(error("{machine: n1-standrd-4, mtbf_hours: 3}"),
             Catch::Contains("did you mean 'n1-standard-4'?"));
  CHECK_THAT(error("{task: ps:0, mtbf_hours: 0}"), Catch::Contains("must be above 0"));
  CHECK_THAT(message_of<InputError>([&] {
               load_scenario(dir.write("g.yaml", kFull), {parse_override("faults=[{task: ")});
             }),
             Catch::Contains("not a YAML list or mapping"));
}

TEST_CASE("Slowdowns are read, and each task gets the ones that slow it") {
  const TempDir dir;
  CHECK(load_scenario(dir.write("plain.yaml", kFull)).slowdowns.empty());
  const std::string path =
      dir.write("slow.yaml", std::string(kFull) +
                                 "slowdowns:\n"
                                 "  - {task: worker:1, factor: 1.5}\n"
                                 "  - {task: worker:0, factor: 3, from_seconds: 2, to_seconds: 4}\n"
                                 "  - {machine: n1-highmem-8, lognormal_sigma: 0.2}\n");
  const Scenario s = load_scenario(path, {}, shipped_machine_types());
  REQUIRE(s.slowdowns.size() == 3);
  CHECK(s.slowdowns[0].part.factor == 1.5);
  CHECK(s.slowdowns[1].part.from_seconds == 2);
  CHECK(s.slowdowns[1].part.to_seconds == 4);
  CHECK(s.slowdowns[2].part.lognormal_sigma == 0.2);
  CHECK(s.slowdowns[2].slows({Role::kPs, 0}, "n1-highmem-8"));
  CHECK_FALSE(s.slowdowns[2].slows({Role::kWorker, 1}, "n1-standard-4"));

  // Each task's own: the straggler, the noisy neighbour's window, no noise
  // on the workers' machine type; the server (n1-highmem-8) gets noise.
  CHECK(distlab::run::task_slowdown(s, {Role::kWorker, 1}).factor(0, 3) == 1.5);
  CHECK(distlab::run::task_slowdown(s, {Role::kWorker, 0}).factor(0, 3) == 3);
  CHECK(distlab::run::task_slowdown(s, {Role::kWorker, 0}).factor(0, 5) == 1);
  CHECK_FALSE(distlab::run::task_slowdown(s, {Role::kChief, 0}).any());
  const auto server = distlab::run::task_slowdown(s, {Role::kPs, 0});
  CHECK(server.factor(7, 0) > 1);
  // The same scenario draws the same noise for every backend that asks.
  CHECK(distlab::run::task_slowdown(s, {Role::kPs, 0}).factor(7, 0) == server.factor(7, 0));
}

TEST_CASE("Broken slowdowns are refused with the entry's key") {
  const TempDir dir;
  auto error = [&](const std::string& slowdowns) {
    return message_of<ConfigError>([&] {
      load_scenario(dir.write("s.yaml", std::string(kFull) + "slowdowns:\n  - " + slowdowns + "\n"),
                    {}, shipped_machine_types());
    });
  };
  CHECK_THAT(error("{task: worker:1, factor: 0.5}"),
             Catch::Contains("s.yaml:28: slowdowns[0].factor: a slowdown is 1 or more"));
  CHECK_THAT(error("{task: worker:1, lognormal_sigma: -0.1}"),
             Catch::Contains("slowdowns[0].lognormal_sigma: a spread is 0 or more"));
  CHECK_THAT(error("{task: worker:1}"),
             Catch::Contains("give a factor, a lognormal_sigma or empirical_steps"));
  CHECK_THAT(error("{task: worker:9, factor: 2}"),
             Catch::Contains("slowdowns[0].task: the cluster has no task worker:9"));
  CHECK_THAT(error("{task: worker:1, machine: n1-standard-4, factor: 2}"),
             Catch::Contains("give a task or a machine type, not both"));
  CHECK_THAT(error("{factor: 2, from_seconds: 5, to_seconds: 5}"),
             Catch::Contains("slowdowns[0].to_seconds: ends before it begins"));
  CHECK_THAT(error("{factor: 2, speed: 3}"), Catch::Contains("slowdowns[0].speed: unknown key"));
}

TEST_CASE("A staleness bound is read for an async parameter server alone") {
  const TempDir dir;
  const std::string ps = dir.write("ps.yaml", kFull);
  CHECK(load_scenario(ps).strategy.staleness_bound == -1);  // kFull's server is sync
  const auto bound = [&](const std::string& value) {
    return load_scenario(ps, {parse_override("strategy.mode=async"),
                              parse_override("strategy.staleness_bound=" + value)})
        .strategy.staleness_bound;
  };
  CHECK(bound("2") == 2);
  CHECK(bound("0") == 0);
  auto error = [&](const std::vector<std::string>& sets) {
    std::vector<distlab::run::Override> overrides;
    for (const auto& set : sets) overrides.push_back(parse_override(set));
    return message_of<ConfigError>([&] { load_scenario(ps, overrides); });
  };
  CHECK_THAT(error({"strategy.mode=async", "strategy.staleness_bound=-1"}),
             Catch::Contains("strategy.staleness_bound: a bound is 0 steps or more"));
  CHECK_THAT(error({"strategy.staleness_bound=1"}),
             Catch::Contains("only an asynchronous parameter server has a staleness bound"));
  CHECK_THAT(error({"strategy.name=allreduce", "strategy.staleness_bound=1"}),
             Catch::Contains("strategy allreduce takes no staleness_bound"));
}

TEST_CASE("Backup workers are read for a sync parameter server, fewer than its replicas") {
  const TempDir dir;
  const std::string ps = dir.write("ps.yaml", kFull);            // sync, chief + 4 workers
  CHECK(load_scenario(ps).strategy.replicas_to_aggregate == 0);  // all of them
  const auto aggregate = [&](const std::string& value) {
    return load_scenario(ps, {parse_override("strategy.replicas_to_aggregate=" + value)})
        .strategy.replicas_to_aggregate;
  };
  CHECK(aggregate("4") == 4);
  CHECK(aggregate("5") == 5);
  auto error = [&](const std::vector<std::string>& sets) {
    std::vector<distlab::run::Override> overrides;
    for (const auto& set : sets) overrides.push_back(parse_override(set));
    return message_of<ConfigError>([&] { load_scenario(ps, overrides); });
  };
  CHECK_THAT(error({"strategy.replicas_to_aggregate=6"}),
             Catch::Contains("strategy.replicas_to_aggregate: a step cannot aggregate 6 of the "
                             "cluster's 5 replicas"));
  CHECK_THAT(error({"strategy.replicas_to_aggregate=0"}),
             Catch::Contains("strategy.replicas_to_aggregate: must be between 1"));
  CHECK_THAT(error({"strategy.mode=async", "strategy.replicas_to_aggregate=2"}),
             Catch::Contains("only a synchronous parameter server aggregates a subset"));
  CHECK_THAT(error({"strategy.name=allreduce", "strategy.replicas_to_aggregate=2"}),
             Catch::Contains("strategy allreduce takes no replicas_to_aggregate"));
}

TEST_CASE("Overlap is read for all-reduce and parameter servers") {
  const TempDir dir;
  const std::string ps = dir.write("ps.yaml", kFull);
  CHECK_FALSE(load_scenario(ps).strategy.overlap);
  CHECK(load_scenario(ps, {parse_override("strategy.overlap=true")}).strategy.overlap);
  CHECK(load_scenario(ps, {parse_override("strategy.name=allreduce"),
                           parse_override("strategy.overlap=true")})
            .strategy.overlap);
  auto error = [&](const std::vector<std::string>& sets) {
    std::vector<distlab::run::Override> overrides;
    for (const auto& set : sets) overrides.push_back(parse_override(set));
    return message_of<ConfigError>([&] { load_scenario(ps, overrides); });
  };
  CHECK_THAT(error({"strategy.overlap=sometimes"}), Catch::Contains("strategy.overlap"));
  CHECK_THAT(error({"strategy.name=mirrored", "strategy.overlap=true"}),
             Catch::Contains("strategy mirrored takes no overlap"));
}

TEST_CASE("Analytic collectives are read for the all-reduce ring they can time") {
  const TempDir dir;
  const std::string ring = dir.write("ring.yaml", kFull);
  const std::vector<std::string> timed = {"strategy.name=allreduce", "fidelity=timing",
                                          "network.model=cm02"};
  auto load = [&](std::vector<std::string> sets) {
    std::vector<distlab::run::Override> overrides;
    for (const auto& set : sets) overrides.push_back(parse_override(set));
    return load_scenario(ring, overrides);
  };
  auto error = [&](std::vector<std::string> sets) {
    return message_of<ConfigError>([&] { load(sets); });
  };
  auto with = [&](std::vector<std::string> sets) {
    sets.insert(sets.begin(), timed.begin(), timed.end());
    sets.push_back("network.collectives=analytic");
    return sets;
  };
  CHECK(load(timed).network.collectives == distlab::run::Collectives::kMessages);
  CHECK(load(with({})).network.collectives == distlab::run::Collectives::kAnalytic);
  CHECK_THAT(error(with({"fidelity=full"})),
             Catch::Contains("network.collectives: analytic times the all-reduce ring in closed "
                             "form, without moving values (set by"));
  CHECK_THAT(error(with({"strategy.name=parameter_server", "cluster.ps=1"})),
             Catch::Contains("strategy parameter_server has no ring between tasks"));
  CHECK_THAT(error(with({"cluster.placement=one_host"})),
             Catch::Contains("on links of the tasks' own"));
  CHECK_THAT(error(with({"network.model=lv08"})), Catch::Contains("the cm02 model"));
  CHECK_THAT(error(with({"faults=[{task: worker:1, at_step: 3}]"})),
             Catch::Contains("a member that fails inside it is not modelled"));
  CHECK_THAT(error({"network.collectives=sometimes"}), Catch::Contains("network.collectives"));
}

TEST_CASE("Switching strategy from the command line fits the scenario to it, with notes") {
  const TempDir dir;
  const std::string ps =
      dir.write("ps.yaml",
                "model: models/mnist_cnn.yaml\n"
                "cluster: {machine: n1-standard-4, chief: 1, workers: 4, ps: 1}\n"
                "strategy: {name: parameter_server, mode: sync}\n");
  const auto has = [](const std::vector<std::string>& notes, const std::string& text) {
    return std::any_of(notes.begin(), notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };

  // To all-reduce: the mode and the parameter server go, the workers stay.
  const Scenario allreduce = load_scenario(ps, {parse_override("strategy.name=allreduce")});
  CHECK(allreduce.strategy.kind == StrategyKind::kAllReduce);
  CHECK(allreduce.cluster.spec.ps == 0);
  CHECK(allreduce.cluster.spec.workers == 4);
  REQUIRE(allreduce.notes.size() == 2);
  CHECK(has(allreduce.notes, "strategy.mode dropped for strategy allreduce"));
  CHECK(has(allreduce.notes, "cluster.ps: 1 dropped for strategy allreduce"));
  // The edited text is a scenario that reads back without notes.
  const Scenario again = load_scenario(dir.write("again.yaml", allreduce.text));
  CHECK(again.strategy.kind == StrategyKind::kAllReduce);
  CHECK(again.notes.empty());

  // Back to a parameter server from an all-reduce scenario: one is added.
  const std::string sync = dir.write("sync.yaml", allreduce.text);
  const Scenario back = load_scenario(sync, {parse_override("strategy.name=parameter_server")});
  CHECK(back.cluster.spec.ps == 1);
  CHECK(has(back.notes, "cluster.ps: none -> 1 for strategy parameter_server"));

  // To local: one replica, so the workers go.
  const Scenario local = load_scenario(ps, {parse_override("strategy.name=local")});
  CHECK(local.cluster.spec.replicas() == 1);
  CHECK(local.cluster.spec.ps == 0);
  CHECK(has(local.notes, "cluster.workers: 4 dropped for strategy local"));

  // The same name as the file's changes nothing.
  const Scenario same = load_scenario(ps, {parse_override("strategy.name=parameter_server")});
  CHECK(same.notes.empty());
  CHECK(same.strategy.mode == PsMode::kSync);

  // What the user sets is never adjusted: a conflict is still an error.
  CHECK(message_of<ConfigError>([&] {
          load_scenario(
              ps, {parse_override("strategy.name=allreduce"), parse_override("cluster.ps=2")});
        }).find("strategy allreduce has no parameter servers") != std::string::npos);
  CHECK(message_of<ConfigError>([&] {
          load_scenario(ps, {parse_override("strategy.name=allreduce"),
                             parse_override("strategy.mode=async")});
        }).find("strategy allreduce takes no mode") != std::string::npos);
  // A count the user removed is the user's too: it is not put back.
  CHECK(message_of<ConfigError>([&] {
          load_scenario(
              ps, {parse_override("strategy.name=parameter_server"), parse_unset("cluster.ps")});
        }).find("strategy parameter_server needs ps: at least 1") != std::string::npos);
  // A whole strategy section names the strategy too.
  const Scenario section = load_scenario(ps, {parse_override("strategy={name: allreduce}")});
  CHECK(section.strategy.kind == StrategyKind::kAllReduce);
  CHECK(section.cluster.spec.ps == 0);
  // Raising a count says so: mirrored needs its chief.
  const std::string no_chief =
      dir.write("no_chief.yaml",
                "model: models/mnist_cnn.yaml\n"
                "cluster: {machine: complex_model_m_gpu, chief: 0, workers: 2}\n"
                "strategy: {name: allreduce}\n");
  const Scenario mirrored = load_scenario(no_chief, {parse_override("strategy.name=mirrored")});
  CHECK(mirrored.cluster.spec.chiefs == 1);
  CHECK(mirrored.cluster.spec.workers == 0);
  CHECK(has(mirrored.notes,
            "cluster.chief: 0 -> 1 for strategy mirrored, which needs exactly 1 chief"));
  // Without a change of strategy, a key that does not fit is an error, as in a file.
  CHECK_THROWS_AS(load_scenario(ps, {parse_override("cluster.ps=0")}), ConfigError);
}

TEST_CASE("Overrides refuse odd YAML with a config error, not a crash") {
  const TempDir dir;
  // A strategy key that is not a name, met while fitting the scenario to a
  // strategy set on the command line.
  const std::string list_key = dir.write("list_key.yaml",
                                         "model: models/mnist_cnn.yaml\n"
                                         "cluster: {machine: n1-standard-4, chief: 1, workers: 1}\n"
                                         "strategy: {name: parameter_server, ? [mode] : sync}\n");
  CHECK_THAT(message_of<ConfigError>(
                 [&] { load_scenario(list_key, {parse_override("strategy.name=allreduce")}); }),
             Catch::Contains("a key must be a plain name"));
  // A value whose alias names the list that holds it.
  const std::string minimal = dir.write("minimal.yaml", kMinimal);
  CHECK_THAT(message_of<ConfigError>(
                 [&] { load_scenario(minimal, {parse_override("faults=[&a [*a]]")}); }),
             Catch::Contains("set by --set faults=[&a [*a]]"));
}

TEST_CASE("An unset override removes a key, before every --set") {
  const TempDir dir;
  const std::string path =
      dir.write("epochs.yaml", std::string(kMinimal) + "training:\n  epochs: 3\n");
  // The epochs removed first, the steps are taken with nothing to replace
  // (so no note).
  const Scenario s =
      load_scenario(path, {parse_override("training.steps=7"), parse_unset("training.epochs")});
  CHECK(s.training.steps == 7);
  CHECK(s.text.find("epochs") == std::string::npos);
  CHECK(s.notes.empty());
  // A key the scenario does not have is named.
  CHECK_THROWS_WITH(load_scenario(path, {parse_unset("training.batch")}),
                    "--unset training.batch: the scenario has no key training.batch");
  CHECK_THROWS_AS(parse_unset("training..epochs"), InputError);
  // The arguments that give the overrides again.
  CHECK(override_arguments({parse_override("a.b=1"), parse_unset("c")}) ==
        std::vector<std::string>{"--set", "a.b=1", "--unset", "c"});
}

TEST_CASE("Every shipped scenario loads against the shipped catalog") {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kSource / "scenarios")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".yaml" && !name.starts_with("machines")) {
      files.push_back(entry.path());
    }
  }
  CHECK(files.size() >= 9);  // the table of docs/scenarios.md
  for (const auto& file : files) {
    CAPTURE(file.string());
    const Scenario s = load_scenario(file.string(), {}, shipped_machine_types());
    CHECK(!s.description.empty());
  }
}

TEST_CASE("Switching strategy on a scenario without a cluster names the missing key") {
  const TempDir dir;
  const std::string file = dir.write("no_cluster.yaml",
                                     "model: models/mnist_cnn.yaml\n"
                                     "strategy: {name: local}\n");
  CHECK_THAT(message_of<ConfigError>(
                 [&] { load_scenario(file, {parse_override("strategy.name=allreduce")}); }),
             Catch::Contains("missing required key 'cluster'"));
}

TEST_CASE("Steps set on the command line replace the file's epochs, with a note") {
  const TempDir dir;
  const std::string file = dir.write("epochs.yaml",
                                     "model: models/mnist_cnn.yaml\n"
                                     "cluster: {machine: n1-standard-4, chief: 1, workers: 1}\n"
                                     "strategy: {name: allreduce}\n"
                                     "training: {epochs: 3}\n");
  const Scenario steps = load_scenario(file, {parse_override("training.steps=1000")});
  CHECK(steps.training.steps == 1000);
  REQUIRE(steps.notes.size() == 1);
  CHECK(steps.notes[0] ==
        "note: training.epochs: 3 dropped, training.steps set on the command line replaces it");

  // And back: epochs set there replace the file's steps.
  const std::string by_steps = dir.write("steps.yaml", steps.text);
  const Scenario epochs = load_scenario(by_steps, {parse_override("training.epochs=2")});
  CHECK(epochs.training.epochs == 2);
  CHECK(epochs.training.steps == 0);
  REQUIRE(epochs.notes.size() == 1);
  CHECK_THAT(epochs.notes[0], Catch::Contains("training.steps: 1000 dropped"));

  // Both on the command line: still the scenario's error, naming them.
  CHECK(message_of<ConfigError>([&] {
          load_scenario(file,
                        {parse_override("training.steps=10"), parse_override("training.epochs=1")});
        }).find("epochs and steps are both given") != std::string::npos);
  // Nothing to replace: no note.
  CHECK(load_scenario(file, {parse_override("training.epochs=5")}).notes.empty());
}

TEST_CASE("An input pipeline reads its stages, and refuses what it cannot time") {
  const TempDir dir;
  auto with = [&](const std::string& section) {
    return dir.write("input.yaml",
                     "model: models/mnist_cnn.yaml\n"
                     "cluster: {machine: n1-standard-4, chief: 1}\n"
                     "strategy: {name: local}\n" +
                         section);
  };
  const Scenario s =
      load_scenario(with("input_pipeline:\n  measured_ghz: 2.45\n  threads: 4\n"
                         "  stages: {decode_jpeg: 1283, resize: 1140, cast: 172}\n"
                         "  offline: [decode_jpeg, resize]\n"));
  const distlab::strategy::InputPipeline& input = s.training.input;
  CHECK(input.enabled());
  CHECK(input.stages.size() == 3);
  CHECK(input.measured_ghz == 2.45);
  CHECK(input.threads == 4);
  CHECK(input.prefetch);
  CHECK(input.microseconds_per_example() == 1283 + 1140 + 172);
  // The comparison the lab made, from the command line.
  const Scenario preprocessed =
      load_scenario(with("input_pipeline:\n  stages: {decode_jpeg: 1283, cast: 172}\n"
                         "  offline: [decode_jpeg]\n"),
                    {parse_override("input_pipeline.preprocessed=true")});
  CHECK(preprocessed.training.input.microseconds_per_example() == 172);
  CHECK_FALSE(load_scenario(with("")).training.input.enabled());

  CHECK_THAT(message_of<ConfigError>([&] {
               load_scenario(
                   with("input_pipeline:\n  stages: {decode_jpeg: 1283}\n"
                        "  offline: [decode_jpg]\n"));
             }),
             Catch::Contains("input.yaml:6: input_pipeline.offline[0]: no stage named "
                             "'decode_jpg' (did you mean 'decode_jpeg'?)"));
  CHECK_THAT(message_of<ConfigError>(
                 [&] { load_scenario(with("input_pipeline:\n  stages: {decode_jpeg: -3}\n")); }),
             Catch::Contains("input_pipeline.stages.decode_jpeg"));
  CHECK_THAT(
      message_of<ConfigError>([&] { load_scenario(with("input_pipeline:\n  stages: {}\n")); }),
      Catch::Contains("input_pipeline.stages: expected the stages"));
  CHECK_THAT(message_of<ConfigError>([&] {
               load_scenario(with("input_pipeline:\n  stages: {cast: 1}\n  preprocessed: true\n"));
             }),
             Catch::Contains("no stage is listed as offline"));
}
