// Reads a whole data file into memory, gunzipping it on the way when it is
// gzip-compressed (the public data sets ship as .gz), so that every format
// reader parses plain bytes and never cares how the file was stored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace distlab::nn {

// The file's bytes, decompressed if they start with the gzip magic (1f 8b);
// concatenated gzip members are joined as gzip(1) does. Throws DataError
// naming the file when it is missing, unreadable, or a corrupt or truncated
// gzip stream.
std::vector<uint8_t> read_file_bytes(const std::string& path);

// Decompresses a complete in-memory gzip stream; `path` only names it in
// errors.
std::vector<uint8_t> gunzip_bytes(std::span<const uint8_t> compressed, const std::string& path);

bool has_gzip_magic(std::span<const uint8_t> bytes);

}  // namespace distlab::nn
