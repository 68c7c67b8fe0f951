// How a task process keeps the memory of its messages. A task allocates and
// frees buffers of about a segment each (strategy.segment_bytes, 1 MiB),
// hundreds per step: glibc's defaults give each of those above 128 KiB
// fresh pages (mmap) or hand freed ones back to the kernel (trim), and the
// next buffer pays a page fault per 4 KiB and the kernel's zeroing of every
// page. Measured over loopback, a third of the page faults of a 100 MB ring
// all-reduce, and about a tenth of its time. The programs also start with
// malloc settings as glibc tunables (common/kept_memory.h), which keep
// what this does not: the evaluation's buffers.
#pragma once

namespace distlab::net {

// Keeps freed message buffers up to 32 MiB each in the heap, and up to
// 128 MiB of free memory at its top, for the next messages. Process-wide:
// call it once, before the first message, in a process that runs a task.
// Returns false where the allocator does not take the settings (not glibc).
bool keep_message_memory();

}  // namespace distlab::net
