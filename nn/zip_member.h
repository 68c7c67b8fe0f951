// One file out of a zip archive, as Keras 3 saves a model (.keras: a zip
// of config.json, metadata.json and the weights). Stored and deflated
// members, found through the archive's central directory; no zip64, no
// encryption (Keras writes neither for a model's config).
#pragma once

#include <string>

namespace distlab::nn {

// The bytes of member `name` of the zip archive `path`. Throws InputError
// naming the archive: not a zip, no such member, or a kind of zip this
// reader does not take.
std::string read_zip_member(const std::string& path, const std::string& name);

}  // namespace distlab::nn
