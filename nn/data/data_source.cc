#include "nn/data/data_source.h"

#include <charconv>

#include "common/error.h"
#include "nn/data/cifar10.h"
#include "nn/data/idx.h"
#include "nn/data/synthetic_images.h"
#include "nn/data/taxi_csv.h"
#include "nn/data/taxi_synthetic.h"

namespace distlab::nn {
namespace {

constexpr const char* kForms =
    "fashion-mnist[:DIR], cifar10:DIR, synthetic[:N], taxi:FILE.csv, synthetic-taxi[:N]";
constexpr int64_t kDefaultSynthetic = 12000;

int64_t parse_count(const std::string& source, const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 2) {
    throw InputError("data source '" + source + "': '" + text +
                     "' is not an example count of 2 or more");
  }
  return value;
}

// The first 5/6 for training and the rest for testing (MNIST's 60k/10k).
DataSplits split(Dataset all, const std::string& name) {
  const int64_t test = std::max<int64_t>(1, all.size() / 6);
  DataSplits s;
  s.train = all.head(all.size() - test);
  s.train.name = name + "/train";
  s.test.name = name + "/test";
  s.test.example_shape = all.example_shape;
  s.test.num_classes = all.num_classes;
  s.test.features = all.features.bottomRows(test);
  s.test.labels.assign(all.labels.end() - test, all.labels.end());
  return s;
}

DataSplits load_taxi(const std::string& path) {
  TaxiCsv csv = read_taxi_csv(path);
  const auto n = static_cast<int64_t>(csv.trips.size());
  if (n < 2) throw DataError(path, "fewer than 2 usable trips");
  const int64_t test = std::max<int64_t>(1, n / 5);
  DataSplits s;
  s.train = make_taxi_dataset(std::span(csv.trips).first(n - test), "taxi/train");
  s.test = make_taxi_dataset(std::span(csv.trips).last(test), "taxi/test");
  return s;
}

DataSplits load_by_name(const std::string& source, const std::string& kind, const std::string& arg,
                        const DataRequirements& r, uint64_t seed) {
  if (kind == "fashion-mnist") {
    const std::string dir = arg.empty() ? kFashionMnistDir : arg;
    return {load_fashion_mnist(dir, true), load_fashion_mnist(dir, false)};
  }
  if (kind == "cifar10") {
    if (arg.empty()) throw InputError("data source 'cifar10' needs a directory: cifar10:DIR");
    return {load_cifar10(arg, true), load_cifar10(arg, false)};
  }
  if (kind == "synthetic") {
    const int64_t n = arg.empty() ? kDefaultSynthetic : parse_count(source, arg);
    return split(
        make_synthetic_images(
            {.examples = n, .shape = r.example_shape, .num_classes = r.num_classes, .seed = seed}),
        "synthetic");
  }
  if (kind == "taxi") {
    if (arg.empty()) throw InputError("data source 'taxi' needs a file: taxi:FILE.csv");
    return load_taxi(arg);
  }
  if (kind == "synthetic-taxi") {
    const int64_t n = arg.empty() ? kDefaultSynthetic : parse_count(source, arg);
    return split(make_taxi_dataset(generate_taxi_trips(n, seed), "synthetic-taxi"),
                 "synthetic-taxi");
  }
  throw InputError("unknown data source '" + source + "'; use one of: " + kForms);
}

void check_fits(const Dataset& d, const DataRequirements& r) {
  if (d.example_shape != r.example_shape) {
    throw InputError("data set " + d.name + " has examples of shape " +
                     d.example_shape.to_string() + ", the model expects " +
                     r.example_shape.to_string());
  }
  if (d.num_classes > r.num_classes) {
    throw InputError("data set " + d.name + " has " + std::to_string(d.num_classes) +
                     " classes, the model only " + std::to_string(r.num_classes));
  }
}

// A data set of `n` examples with labels but no features: all that a
// simulation in timing fidelity reads of its data is how many there are.
Dataset sizes_only(int64_t n, const DataRequirements& r, const std::string& name) {
  Dataset d;
  d.name = name;
  d.example_shape = r.example_shape;
  d.num_classes = r.num_classes;
  d.features.resize(n, 0);
  d.labels.assign(n, 0);
  return d;
}

}  // namespace

DataSplits load_data_sizes(const std::string& source, const DataRequirements& requirements,
                           uint64_t seed) {
  const auto colon = source.find(':');
  const std::string kind = source.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : source.substr(colon + 1);
  if (kind != "synthetic" && kind != "synthetic-taxi") return load_data(source, requirements, seed);
  const int64_t n = arg.empty() ? kDefaultSynthetic : parse_count(source, arg);
  const int64_t test = std::max<int64_t>(1, n / 6);  // as split() cuts
  return {sizes_only(n - test, requirements, kind + "/train"),
          sizes_only(test, requirements, kind + "/test")};
}

DataSplits load_data(const std::string& source, const DataRequirements& requirements,
                     uint64_t seed) {
  const auto colon = source.find(':');
  const std::string kind = source.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : source.substr(colon + 1);
  DataSplits s = load_by_name(source, kind, arg, requirements, seed);
  check_fits(s.train, requirements);
  check_fits(s.test, requirements);
  return s;
}

}  // namespace distlab::nn
