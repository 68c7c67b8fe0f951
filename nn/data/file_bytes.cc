#include "nn/data/file_bytes.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "common/error.h"

namespace distlab::nn {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::vector<uint8_t> read_raw(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw DataError(path, "is a directory, not a file");
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw DataError(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<uint8_t> bytes;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec) bytes.reserve(size);
  // Read in chunks rather than trusting the size: the file may be a pipe or
  // may change while it is read.
  uint8_t chunk[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(chunk, 1, sizeof chunk, file.get());
    bytes.insert(bytes.end(), chunk, chunk + got);
    if (got < sizeof chunk) break;
  }
  if (std::ferror(file.get())) {
    throw DataError(path, std::string("read failed: ") + std::strerror(errno));
  }
  return bytes;
}

// Inflates one gzip member starting at in[pos], appending to out; returns
// the position just after the member.
std::size_t inflate_member(std::span<const uint8_t> in, std::size_t pos, std::vector<uint8_t>& out,
                           const std::string& path) {
  z_stream zs{};
  // 16 + MAX_WBITS: expect a gzip header and trailer, and check the CRC.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw DataError(path, "zlib: out of memory");
  zs.next_in = const_cast<Bytef*>(in.data() + pos);
  zs.avail_in = static_cast<uInt>(in.size() - pos);  // data files stay far below 4 GiB
  // Inflate into a fixed chunk and append it: simpler than growing `out`
  // in place, and the copy costs little beside the decompression.
  std::vector<uint8_t> chunk(1 << 20);
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = chunk.data();
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    out.insert(out.end(), chunk.begin(), chunk.end() - zs.avail_out);
  }
  const std::size_t end = in.size() - zs.avail_in;
  const std::string zlib_msg = zs.msg ? zs.msg : "zlib error";
  inflateEnd(&zs);
  if (rc == Z_STREAM_END) return end;
  // With room left for output, "no progress possible" means the input ran out.
  if (rc == Z_BUF_ERROR) throw DataError(path, "truncated gzip stream: it ends before its trailer");
  if (rc == Z_MEM_ERROR) throw DataError(path, "zlib: out of memory");
  throw DataError(path, "corrupt gzip stream: " + zlib_msg);
}

}  // namespace

bool has_gzip_magic(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

std::vector<uint8_t> gunzip_bytes(std::span<const uint8_t> compressed, const std::string& path) {
  std::vector<uint8_t> out;
  out.reserve(compressed.size() * 3);
  std::size_t pos = 0;
  while (pos < compressed.size()) {
    if (!has_gzip_magic(compressed.subspan(pos))) {
      throw DataError(path, "trailing garbage: " + std::to_string(compressed.size() - pos) +
                                " bytes after the gzip stream");
    }
    pos = inflate_member(compressed, pos, out, path);
  }
  return out;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::vector<uint8_t> bytes = read_raw(path);
  if (!has_gzip_magic(bytes)) return bytes;
  return gunzip_bytes(bytes, path);
}

}  // namespace distlab::nn
