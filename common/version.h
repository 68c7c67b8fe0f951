// distlab's version: the commit the build was made from (git describe, with
// "-dirty" for uncommitted changes), so that every run directory says which
// code produced it. Written at each build by cmake/write_version.cmake.
#pragma once

namespace distlab {

const char* version();

}  // namespace distlab
