#include "apps/train/training.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "apps/train/checkpoints.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/progress.h"
#include "common/sha256.h"
#include "common/version.h"
#include "nn/data/data_source.h"
#include "nn/keras_model.h"
#include "nn/kernels/kernels.h"
#include "nn/model.h"
#include "nn/model_summary.h"
#include "nn/threads.h"
#include "nn/trainer.h"
#include "run/out_directory.h"

namespace distlab::train {
namespace {

using nn::DataSplits;
using nn::EpochResult;
using nn::Evaluation;
using nn::Model;
using nn::ModelSpec;
using nn::Trainer;

std::string timestamp() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", std::localtime(&now));
  return text;
}

// The parameters' and the moving statistics' SHA-256, as the distributed
// runs report it: equal for a run and the same run resumed.
std::string weights_sha256(const Model& model) {
  Sha256 hash;
  hash.update(std::as_bytes(model.parameters()));
  hash.update(std::as_bytes(model.state()));
  return hash.hex_digest();
}

// The model spec, with --batch.
ModelSpec model_spec(const Options& o) {
  ModelSpec spec = nn::load_model_spec(o.model);
  if (o.batch_size > 0) spec.batch_size = o.batch_size;
  return spec;
}

// The data, with --train-examples.
DataSplits training_data(const Options& o, const ModelSpec& spec) {
  DataSplits data = nn::load_data(o.data, {spec.input, spec.num_classes}, o.seed);
  if (o.train_examples > 0) data.train = data.train.head(o.train_examples);
  return data;
}

// --out, or runs/train-<model>-<time>; claimed now (run/out_directory.h):
// never an earlier run's, unless it is the run resumed, which goes on in
// place.
run::OutDirectory claim_run_directory(const Options& o, const ModelSpec& spec) {
  const std::string out =
      o.out.empty() ? run::unused_directory("runs/train-" + spec.name + "-" + timestamp()) : o.out;
  return run::claim_out_directory(out, o.resume, "train");
}

// curve.csv: a new one with its header, or, for a run continued in place,
// the earlier one, to which a row per epoch is added.
std::ofstream open_curve(const run::OutDirectory& out) {
  const std::filesystem::path path = std::filesystem::path(out.path) / "curve.csv";
  if (out.continued && std::filesystem::exists(path)) {
    return std::ofstream(path, std::ios::app);
  }
  std::ofstream curve(path);
  curve << "epoch,step,seconds,train_loss,train_accuracy,test_loss,test_accuracy,"
           "learning_rate,examples_per_second\n";
  return curve;
}

// What the earlier segments of a run continued in place left in its
// summary.json: their epochs, training seconds and segments.
struct EarlierSegments {
  nlohmann::json summary;  // null: none finished
  std::vector<nlohmann::json> epochs;
  double training_seconds = 0;
  double wall_seconds = 0;
  nlohmann::json segments = nlohmann::json::array();
};

EarlierSegments earlier_segments(const run::OutDirectory& out) {
  EarlierSegments earlier;
  if (out.earlier_segments == 0) return earlier;
  const std::string path = (std::filesystem::path(out.path) / "summary.json").string();
  try {
    earlier.summary = nlohmann::json::parse(read_file_text(path));
    for (const nlohmann::json& e : earlier.summary.at("epochs")) earlier.epochs.push_back(e);
    earlier.training_seconds = earlier.summary.value("training_seconds", 0.0);
    earlier.wall_seconds = earlier.summary.at("wall_seconds").get<double>();
    if (const auto it = earlier.summary.find("segments"); it != earlier.summary.end()) {
      earlier.segments = *it;
    } else {  // a summary from before segments were kept: the run so far is one
      earlier.segments.push_back({{"command", nullptr},
                                  {"version", nullptr},
                                  {"resumed_from", earlier.summary.at("resumed_from")},
                                  {"wall_seconds", earlier.wall_seconds}});
    }
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path, std::string("not a summary that ./train wrote: ") + e.what());
  }
  return earlier;
}

// One run of ./train: the model and its trainer, and what the run
// directory and the console get of each epoch.
class TrainingRun {
 public:
  TrainingRun(const Options& o, const ModelSpec& spec, const DataSplits& data,
              run::OutDirectory out);
  int run();

 private:
  bool more() const;
  void print_plan() const;
  void train_epoch();
  EpochResult train_with_progress(int epoch);
  void record(int epoch, const EpochResult& r, const Evaluation& test, double rate);
  void print_epoch(int epoch, const EpochResult& r, const Evaluation& test, double rate,
                   float lr) const;
  void write_summary(double wall_seconds, const std::string& resumed_from) const;
  nlohmann::json segment_summary(std::vector<nlohmann::json> epochs, double training_seconds,
                                 double wall_seconds, const std::string& resumed_from,
                                 nlohmann::json segments) const;

  const Options& o_;
  const DataSplits& data_;
  const run::OutDirectory out_;
  const std::filesystem::path dir_;
  const EarlierSegments earlier_;
  std::ofstream curve_;
  Model model_;
  Trainer trainer_;
  const bool by_steps_;
  std::vector<nlohmann::json> epochs_;  // summary.json's, this segment's
  double elapsed_ = 0;                  // training seconds, the epochs' summed, every segment's
};

TrainingRun::TrainingRun(const Options& o, const ModelSpec& spec, const DataSplits& data,
                         run::OutDirectory out)
    : o_(o),
      data_(data),
      out_(std::move(out)),
      dir_(out_.path),
      earlier_(earlier_segments(out_)),
      curve_(open_curve(out_)),
      model_(spec, o.seed),
      trainer_(model_, data_.train, o.seed),
      by_steps_(o.steps > 0),
      elapsed_(earlier_.training_seconds) {}

int TrainingRun::run() {
  if (!o_.quiet) print_plan();
  const std::string resumed_from = o_.resume.empty() ? "" : restore(o_, model_, trainer_);
  const auto start = std::chrono::steady_clock::now();
  // An epoch at a time; with --steps, the last one may stop part way.
  while (more()) train_epoch();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_summary(wall, resumed_from);
  save_model(dir_, o_, model_, trainer_);
  if (!o_.quiet) {
    std::printf("wrote %s/{summary.json,curve.csv,model.safetensors}%s\n", dir_.c_str(),
                o_.checkpoint_every > 0 ? " and checkpoints/" : "");
  }
  return 0;
}

bool TrainingRun::more() const {
  return by_steps_ ? trainer_.global_step() < o_.steps : trainer_.epochs_done() < o_.epochs;
}

void TrainingRun::print_plan() const {
  const ModelSpec& spec = model_.spec();
  // An imported model's layers, as Keras' model.summary() shows them.
  if (nn::names_keras_model(o_.model)) {
    std::printf("%s", nn::model_summary(spec.name, model_.network()).c_str());
  }
  std::printf("training %s (%lld parameters) on %s: %lld examples, batch %d, %s, %s kernels\n",
              spec.name.c_str(), static_cast<long long>(model_.parameter_count()), o_.data.c_str(),
              static_cast<long long>(data_.train.size()), spec.batch_size,
              by_steps_ ? fmt::format("{} steps", o_.steps).c_str()
                        : fmt::format("{} epochs", o_.epochs).c_str(),
              nn::kernels::kernels().level);
  if (by_steps_) {
    std::printf(
        "note: --steps %lld replaces the epochs: %.2f passes over the %lld examples, "
        "%lld steps each\n",
        static_cast<long long>(o_.steps),
        static_cast<double>(o_.steps) / static_cast<double>(trainer_.steps_per_epoch()),
        static_cast<long long>(data_.train.size()),
        static_cast<long long>(trainer_.steps_per_epoch()));
  }
}

// The rest of the current epoch (or up to --steps), then the test split.
void TrainingRun::train_epoch() {
  const int e = static_cast<int>(trainer_.epochs_done());
  const EpochResult r = train_with_progress(e);
  const Evaluation test = model_.evaluate(data_.test);
  // The plateau schedule watches whole epochs only.
  const float lr = r.complete ? trainer_.end_epoch(test.loss) : r.learning_rate;
  const bool last = !more();
  elapsed_ += r.seconds;
  const double rate = static_cast<double>(r.examples) / r.seconds;
  record(e + 1, r, test, rate);
  if (!o_.quiet) print_epoch(e + 1, r, test, rate, lr);
  if (o_.checkpoint_every > 0 && ((r.complete && (e + 1) % o_.checkpoint_every == 0) || last)) {
    save_checkpoint(dir_, o_, model_, trainer_);
  }
}

EpochResult TrainingRun::train_with_progress(int epoch) {
  int64_t steps = trainer_.steps_per_epoch() - trainer_.position().batch;
  if (by_steps_) steps = std::min(steps, o_.steps - trainer_.global_step());
  Progress progress("epoch " + std::to_string(epoch + 1), steps, stderr, !o_.quiet);
  const EpochResult r = trainer_.train_epoch(
      [&](int64_t step, int64_t, double loss) {
        progress.update(step, fmt::format("loss {:.4f}", loss));
      },
      by_steps_ ? o_.steps : 0);
  progress.finish();
  return r;
}

// The epoch's row of curve.csv and its entry in summary.json.
void TrainingRun::record(int epoch, const EpochResult& r, const Evaluation& test, double rate) {
  curve_ << epoch << "," << trainer_.global_step() << "," << elapsed_ << "," << r.train_loss << ","
         << r.train_accuracy << "," << test.loss << "," << test.accuracy << "," << r.learning_rate
         << "," << rate << std::endl;
  epochs_.push_back({{"epoch", epoch},
                     {"step", trainer_.global_step()},
                     {"complete", r.complete},
                     {"train_loss", r.train_loss},
                     {"train_accuracy", r.train_accuracy},
                     {"test_loss", test.loss},
                     {"test_accuracy", test.accuracy},
                     {"examples_per_second", rate},
                     {"learning_rate", r.learning_rate}});
}

void TrainingRun::print_epoch(int epoch, const EpochResult& r, const Evaluation& test, double rate,
                              float lr) const {
  const std::string part = r.complete ? ""
                                      : fmt::format(" ({} of {} steps)", trainer_.position().batch,
                                                    trainer_.steps_per_epoch());
  std::printf(
      "epoch %d%s: train loss %.4f, test loss %.4f, test accuracy %.4f, %.0f examples/s%s\n", epoch,
      part.c_str(), r.train_loss, test.loss, test.accuracy, rate,
      lr != r.learning_rate ? (", learning rate now " + std::to_string(lr)).c_str() : "");
}

// summary.json of a segment: `epochs` and the seconds are the whole
// run's for the run's summary, the segment's own for segments/<n>/.
nlohmann::json TrainingRun::segment_summary(std::vector<nlohmann::json> epochs,
                                            double training_seconds, double wall_seconds,
                                            const std::string& resumed_from,
                                            nlohmann::json segments) const {
  nlohmann::json summary = {{"model", model_.spec().name},
                            {"data", o_.data},
                            {"seed", o_.seed},
                            {"threads", o_.threads},
                            {"isa", nn::kernels::kernels().level},
                            {"batch_size", model_.spec().batch_size},
                            {"parameters", model_.parameter_count()},
                            {"epochs", epochs},
                            {"training_seconds", training_seconds},
                            {"wall_seconds", wall_seconds},
                            {"weights_sha256", weights_sha256(model_)},
                            {"resumed_from", resumed_from.empty() ? nlohmann::json(nullptr)
                                                                  : nlohmann::json(resumed_from)},
                            {"command", o_.command},
                            {"version", version()},
                            {"segments", std::move(segments)}};
  if (!epochs.empty()) {
    summary["final_loss"] = epochs.back()["test_loss"];
    summary["final_accuracy"] = epochs.back()["test_accuracy"];
  }
  return summary;
}

// summary.json; for a run continued in place, the whole run's, and each
// segment's own under segments/<n>/ (the first one's was the run's).
void TrainingRun::write_summary(double wall_seconds, const std::string& resumed_from) const {
  const nlohmann::json own_segment = {
      {"command", o_.command},
      {"version", version()},
      {"resumed_from",
       resumed_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(resumed_from)},
      {"step", trainer_.global_step()},
      {"wall_seconds", wall_seconds}};
  auto write = [](const std::filesystem::path& path, const nlohmann::json& summary) {
    const std::string text = summary.dump(2) + "\n";
    write_file_atomically(path.string(), std::as_bytes(std::span(text)));
  };
  if (earlier_.summary.is_null()) {
    write(dir_ / "summary.json", segment_summary(epochs_, elapsed_, wall_seconds, resumed_from,
                                                 nlohmann::json::array({own_segment})));
    return;
  }
  const int number = out_.earlier_segments + 1;
  const std::filesystem::path segments = dir_ / "segments";
  std::filesystem::create_directories(segments / "1");
  if (!std::filesystem::exists(segments / "1" / "summary.json")) {
    write(segments / "1" / "summary.json", earlier_.summary);
  }
  std::filesystem::create_directories(segments / std::to_string(number));
  write(segments / std::to_string(number) / "summary.json",
        segment_summary(epochs_, elapsed_ - earlier_.training_seconds, wall_seconds, resumed_from,
                        nlohmann::json::array({own_segment})));
  std::vector<nlohmann::json> epochs = earlier_.epochs;
  epochs.insert(epochs.end(), epochs_.begin(), epochs_.end());
  nlohmann::json all_segments = earlier_.segments;
  all_segments.push_back(own_segment);
  const nlohmann::json& first_resumed = earlier_.summary.at("resumed_from");
  write(dir_ / "summary.json",
        segment_summary(std::move(epochs), elapsed_, earlier_.wall_seconds + wall_seconds,
                        first_resumed.is_null() ? "" : first_resumed.get<std::string>(),
                        std::move(all_segments)));
}

}  // namespace

int train(const Options& o) {
  nn::set_compute_threads(o.threads);
  const ModelSpec spec = model_spec(o);
  const DataSplits data = training_data(o, spec);
  return TrainingRun(o, spec, data, claim_run_directory(o, spec)).run();
}

}  // namespace distlab::train
