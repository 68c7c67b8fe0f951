#include "nn/zip_member.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/error.h"

namespace distlab::nn {
namespace {

// Little-endian fields of the zip format (APPNOTE.TXT, section 4.3).
uint32_t u32(const std::string& bytes, std::size_t at) {
  if (at + 4 > bytes.size()) return 0;
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + at);
  return b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t{b[3]} << 24);
}
uint16_t u16(const std::string& bytes, std::size_t at) {
  if (at + 2 > bytes.size()) return 0;
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + at);
  return static_cast<uint16_t>(b[0] | (b[1] << 8));
}

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;

std::string inflated(const std::string& path, const char* data, std::size_t size,
                     std::size_t expected) {
  std::string out(expected, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw InputError(path + ": zlib would not start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int status = inflate(&z, Z_FINISH);
  inflateEnd(&z);
  if (status != Z_STREAM_END || z.total_out != expected) {
    throw InputError(path + ": a damaged member (it does not inflate to its size)");
  }
  return out;
}

}  // namespace

std::string read_zip_member(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the file");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The end-of-directory record is in the last 64 KiB + 22 bytes (its
  // comment is at most 65,535 bytes).
  std::size_t end = std::string::npos;
  for (std::size_t at = bytes.size() >= 22 ? bytes.size() - 22 : 0;; --at) {
    if (u32(bytes, at) == kEndOfDirectory) {
      end = at;
      break;
    }
    if (at == 0 || bytes.size() - at > 65535 + 22) break;
  }
  if (end == std::string::npos) throw InputError(path + ": not a zip archive");
  const uint16_t entries = u16(bytes, end + 10);
  std::size_t at = u32(bytes, end + 16);
  for (uint16_t i = 0; i < entries; ++i) {
    if (u32(bytes, at) != kDirectoryEntry || at + 46 > bytes.size()) {
      throw InputError(path + ": a damaged zip directory");
    }
    const uint16_t method = u16(bytes, at + 10);
    const uint32_t packed = u32(bytes, at + 20);
    const uint32_t size = u32(bytes, at + 24);
    const uint16_t name_length = u16(bytes, at + 28);
    const uint16_t extra_length = u16(bytes, at + 30);
    const uint16_t comment_length = u16(bytes, at + 32);
    const uint32_t local = u32(bytes, at + 42);
    if (bytes.compare(at + 46, name_length, name) == 0 && name_length == name.size()) {
      if (u32(bytes, local) != kLocalHeader) throw InputError(path + ": a damaged zip member");
      const std::size_t data =
          std::size_t{local} + 30 + u16(bytes, local + 26) + u16(bytes, local + 28);
      if (packed == 0xffffffff || size == 0xffffffff) {
        throw InputError(path + ": a zip64 member, which this reader does not take");
      }
      if (data + packed > bytes.size()) throw InputError(path + ": a truncated zip member");
      // A model's config is kilobytes; a size past this is a damaged entry.
      if (size > (uint32_t{1} << 26)) {
        throw InputError(path + ": " + name + " claims " + std::to_string(size) +
                         " bytes, more than a model's config holds");
      }
      if (method == 0) return bytes.substr(data, packed);
      if (method == 8) return inflated(path, bytes.data() + data, packed, size);
      throw InputError(path + ": " + name + " is compressed with method " + std::to_string(method) +
                       "; this reader takes stored and deflated");
    }
    at += 46 + name_length + extra_length + comment_length;
  }
  throw InputError(path + ": no " + name + " in the archive");
}

}  // namespace distlab::nn
