// Where distlab's shipped files are: the machine catalog
// (scenarios/machines.yaml), the scenarios and the model specs they name.
//
// In order:
//   1. $DISTLAB_HOME, a folder that holds scenarios/ (an image or a node
//      that keeps them elsewhere);
//   2. an installed copy: PREFIX/share/distlab, where the running binary
//      is PREFIX/bin/... (`cmake --install`), wherever PREFIX was moved;
//   3. the source tree the build was made from (a build used in place).
// So a copied install finds its own files, not those of the machine it
// was built on.
#pragma once

#include <string>

namespace distlab {

// The folder that holds scenarios/. Throws InputError when $DISTLAB_HOME
// names a folder without scenarios/machines.yaml.
std::string shipped_files_folder();

// shipped_files_folder() + "/scenarios".
std::string shipped_scenarios_folder();

}  // namespace distlab
