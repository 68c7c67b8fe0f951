// How a task process keeps the memory it frees. A task allocates and frees
// buffers of about a segment each (strategy.segment_bytes, 1 MiB), hundreds
// per step, and the chief its evaluation's batches (12 MB each for the
// CIFAR-10 MLP) every few steps: glibc's defaults give each of those above
// 128 KiB fresh pages (mmap) or hand freed ones back to the kernel (trim),
// and the next buffer pays a page fault per 4 KiB and the kernel's zeroing
// of every page. Measured over loopback, a third of the page faults of a
// 100 MB ring all-reduce, and about a tenth of its time; and 7,400 page
// faults in each evaluation of the CIFAR-10 MLP, 110 of its 140 ms.
#pragma once

#include <optional>
#include <string>

namespace distlab::net {

// Keeps freed buffers up to 32 MiB each in the heap, and up to 128 MiB of
// free memory at its top, for the next ones. Process-wide: call it once,
// before the first message, in a process that runs a task. Returns false
// where the allocator does not take the settings (not glibc).
bool keep_message_memory();

// The same settings as glibc reads them when a process starts
// (GLIBC_TUNABLES). Set from within by keep_message_memory(), they did not
// keep the evaluation's buffers of a ./realnet task (the page faults above);
// read at the start, they did. The value GLIBC_TUNABLES should have, given
// its value now (null: unset), or nothing when it already sets them (a
// user's own choice included).
std::optional<std::string> kept_memory_tunables(const char* current);

// Runs this program again from the start, with the same arguments, with
// GLIBC_TUNABLES set by kept_memory_tunables, unless it already is; returns
// (and the process goes on as it is) where that cannot be done. Call it
// first thing in main(), before any thread starts.
void restart_with_kept_memory(char** argv);

}  // namespace distlab::net
