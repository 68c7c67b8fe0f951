// Freed memory kept for the next buffers. A task allocates and frees large
// buffers again and again: messages of a segment (1 MiB) hundreds of times a
// step, the chief's evaluation batches (12 MB each for the CIFAR-10 MLP)
// every few steps. glibc's defaults give each buffer above 128 KiB fresh
// pages (mmap) or hand freed ones back to the kernel (trim), and the next
// buffer pays a page fault per 4 KiB and the kernel's zeroing of every
// page: measured, 7,400 page faults in each evaluation of the CIFAR-10 MLP
// in a ./realnet task, 105 of its 140 ms. Raised thresholds keep them, but
// only when glibc reads them as the process starts (GLIBC_TUNABLES): set
// from within by mallopt, the same thresholds did not keep those buffers.
// And a buffer above 32 MiB (the largest mmap threshold glibc takes) is
// always mapped afresh: the lab CNN's activations at the evaluation's batch
// of 1,000 (100 MB) made its evaluation 255 ms instead of 105. So no buffer
// is mapped on its own; all come from the heap, which keeps up to 1 GiB
// free at its top (a task's peak memory stays its resident size). Earlier
// measured for messages alone: a third of the page faults of a 100 MB ring
// all-reduce over loopback, and about a tenth of its time.
#pragma once

#include <optional>
#include <string>

namespace distlab {

// The value GLIBC_TUNABLES should have, given its value now (null: unset):
// every buffer from the heap (glibc.malloc.mmap_max=0), and up to 1 GiB of
// free memory kept at its top. Nothing when it already sets how malloc maps
// or trims (a process started again with them, or a user's own choice).
std::optional<std::string> kept_memory_tunables(const char* current);

// Runs this program again from the start, with the same arguments, with
// GLIBC_TUNABLES set by kept_memory_tunables, unless it already is; returns
// (and the process goes on as it is) where that cannot be done. Call it
// first thing in main(), before any thread starts. Processes it starts
// inherit the setting. The exec leaves an emulator that runs the program
// (qemu-user, as the tests of older CPUs run ./train), so a program run
// that way must not call it: ./realnet and ./calibrate do.
void restart_with_kept_memory(char** argv);

}  // namespace distlab
