// Names for the data sets a run can train on, as users write them on a
// command line or in a scenario, and the loader that turns one into a
// training and a test split:
//
//   fashion-mnist[:DIR]     the default; DIR defaults to Debian's package
//   cifar10:DIR             CIFAR-10 binary batches (data_batch_*.bin)
//   synthetic[:N]           N seeded examples of the model's input shape
//   taxi:FILE.csv           Chicago taxi trips; the last 20% are the test set
//   synthetic-taxi[:N]      N seeded taxi trips
#pragma once

#include <cstdint>
#include <string>

#include "nn/data/dataset.h"

namespace distlab::nn {

struct DataSplits {
  Dataset train;
  Dataset test;
};

// What a model expects of its data: the loaded sets are checked against it.
struct DataRequirements {
  Shape example_shape;
  int num_classes = 0;
};

// Loads `source` (see above). A malformed name is an InputError listing the
// accepted forms; unreadable files are DataErrors; data that do not fit the
// requirements are InputErrors saying what the model expects.
DataSplits load_data(const std::string& source, const DataRequirements& requirements,
                     uint64_t seed);

// The same splits where only their sizes matter (a simulation in timing
// fidelity): synthetic sources give examples without features, generated
// in no time and memory; files are read as load_data reads them.
DataSplits load_data_sizes(const std::string& source, const DataRequirements& requirements,
                           uint64_t seed);

}  // namespace distlab::nn
