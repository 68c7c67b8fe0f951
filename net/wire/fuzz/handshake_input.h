// The input format of handshake_fuzz, shared with make_seeds:
//
//   byte 0          mode: 0 verify, 1 acceptor, 2 connector (taken mod 3)
//   verify:         byte 1 secret length, byte 2 nonce length, byte 3
//                   prover (even: connector), bytes 4-7 connector ordinal,
//                   bytes 8-11 acceptor ordinal, bytes 12-15 connector
//                   incarnation (little-endian), then the secret, the
//                   nonce, and the rest as the MAC
//   acceptor and    byte 1 secret length, bytes 2-4 chiefs (mod 2), workers
//   connector:      (mod 5), ps (mod 3), byte 5 this task's ordinal, byte 6
//                   the acceptor's ordinal (connector mode; both mod the task
//                   count), then the secret, then frames: a 56-byte header
//                   and as much of its payload as the input still holds
#pragma once

#include <cstddef>

namespace distlab::net::fuzz {

inline constexpr std::size_t kVerifyPreamble = 16;
inline constexpr std::size_t kPeerPreamble = 7;

enum Mode : unsigned char { kVerify = 0, kAcceptor = 1, kConnector = 2 };

}  // namespace distlab::net::fuzz
