// ./train's command line, as main.cc reads it.
#pragma once

#include <cstdint>
#include <string>

namespace distlab::train {

struct Options {
  // "": the lab CNN among the shipped files (common/shipped_files.h).
  std::string model;
  std::string data = "fashion-mnist";
  int epochs = 2;
  int64_t steps = 0;           // > 0: train this many steps instead of `epochs`
  int64_t train_examples = 0;  // 0: all
  int batch_size = 0;          // 0: the spec's
  uint64_t seed = 0;
  int threads = 2;
  std::string out;
  int checkpoint_every = 0;  // epochs; 0: no checkpoints
  std::string resume;
  std::string evaluate;  // a model file or run directory to evaluate instead of training
  bool quiet = false;
  std::string command;  // the command line, for summary.json
  // Which of these the command line gave (--evaluate takes the others from
  // the model file).
  bool model_given = false, data_given = false, seed_given = false;
};

}  // namespace distlab::train
