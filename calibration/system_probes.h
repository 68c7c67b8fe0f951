// The probes of ./calibrate that measure the machine rather than the NN
// core: host memory bandwidth, loopback TCP through the real runtime, and
// disk writes that reach the disk. Each one takes a time budget, repeats
// each size and keeps the median, and fits a fixed cost plus a rate.
#pragma once

#include <string>
#include <vector>

#include "calibration/measurement.h"

namespace distlab::calibration {

// Bytes per second that `threads` threads stream through memory (read
// plus written, as the simulator's compute model counts bytes), over
// buffers well beyond the last-level cache.
struct MemoryMeasurement {
  double bandwidth = 0;  // bytes/s
  std::vector<Sample> samples;
};
MemoryMeasurement measure_memory(int threads, double budget_seconds);

// Ping-pong between two TcpRuntime tasks over 127.0.0.1, from 8 bytes to
// several MB: one way = half the round trip = latency + bytes / bandwidth.
// And what a message costs the CPU, the sender's and the receiver's sides
// together (the process's CPU time over the messages): cpu_seconds +
// bytes / cpu_bandwidth. The two sides copy at once on two cores, so a
// message costs more CPU than its one-way time.
struct LinkMeasurement {
  double latency_seconds = 0;   // one way, runtime to runtime
  double bandwidth = 0;         // bytes/s, one flow
  std::vector<Sample> samples;  // size = message bytes, seconds = one way
  FitQuality quality;
  double cpu_seconds = 0;           // per message, both sides
  double cpu_bandwidth = 0;         // bytes per CPU second, both sides
  std::vector<Sample> cpu_samples;  // size = message bytes, seconds = CPU per message
  FitQuality cpu_quality;
};
LinkMeasurement measure_loopback(double budget_seconds);

// Files of several sizes written, fsync'ed and renamed into `folder` as a
// checkpoint is (then removed): seconds = file_seconds + bytes / bandwidth.
struct DiskMeasurement {
  double write_bandwidth = 0;  // bytes/s
  double file_seconds = 0;     // fixed cost of one file
  std::vector<Sample> samples;
  FitQuality quality;
};
DiskMeasurement measure_disk(const std::string& folder, double budget_seconds);

}  // namespace distlab::calibration
