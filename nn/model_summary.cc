#include "nn/model_summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "nn/parameters.h"

namespace distlab::nn {
namespace {

std::string shape_text(const Shape& s) {
  return s.is_flat() ? fmt::format("(None, {})", s.channels)
                     : fmt::format("(None, {}, {}, {})", s.height, s.width, s.channels);
}

}  // namespace

std::string model_summary(const std::string& name, const Sequential& network) {
  struct Row {
    std::string layer, shape;
    int64_t params;
  };
  std::vector<Row> rows;
  int64_t trainable = 0, state = 0;
  std::size_t width = std::string("Layer (type)").size();
  for (const LayerPtr& layer : network.layers()) {
    ParameterLayout t, s;
    layer->declare(t, s);
    trainable += t.count();
    state += s.count();
    rows.push_back({fmt::format("{} ({})", layer->name(), layer->kind()),
                    shape_text(layer->output_shape()), t.count() + s.count()});
    width = std::max(width, rows.back().layer.size());
  }
  const std::string rule(width + 36, '-');
  std::string text = fmt::format("Model: \"{}\"\n{}\n{:<{}}  {:<20}  {:>12}\n{}\n", name, rule,
                                 "Layer (type)", width, "Output Shape", "Param #", rule);
  for (const Row& row : rows) {
    text += fmt::format("{:<{}}  {:<20}  {:>12}\n", row.layer, width, row.shape, row.params);
  }
  text += fmt::format("{}\nTotal params: {}\nTrainable params: {}\nNon-trainable params: {}\n",
                      rule, trainable + state, trainable, state);
  return text;
}

}  // namespace distlab::nn
