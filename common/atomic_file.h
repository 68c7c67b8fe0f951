// Files that are either whole or absent under their name: what a checkpoint
// (or any result a later run depends on) needs when the process can die at
// any instruction.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace distlab {

// Writes `bytes` to a temporary file beside `path` (a hidden name, so that
// no reader ever takes it for a finished file), flushes it to the disk
// (fsync), renames it onto `path` and flushes the folder, so that after a
// crash at any point `path` holds the old content or the new, never a part.
// Throws Error naming the file and the system's reason.
void write_file_atomically(const std::string& path, std::span<const std::byte> bytes);

// The whole file. Throws DataError when it cannot be read.
std::vector<std::byte> read_file_bytes(const std::string& path);
// The same, as text (a model spec kept in the files a run writes).
std::string read_file_text(const std::string& path);

}  // namespace distlab
