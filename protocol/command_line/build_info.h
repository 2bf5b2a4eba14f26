// What this build of rplasma is: the CMake project version and the git revision the build tree
// was configured from ("unknown" when configured without git or outside a clone). The revision is
// captured when CMake configures, so a tree built again after new commits without reconfiguring
// reports the revision it was configured at.
#ifndef RPLASMA_PROTOCOL_COMMAND_LINE_BUILD_INFO_H_
#define RPLASMA_PROTOCOL_COMMAND_LINE_BUILD_INFO_H_

namespace rplasma {

const char* BuildVersion();      // "0.1.0"
const char* BuildGitRevision();  // "7eb1ec8c0a1f" or "unknown"

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_COMMAND_LINE_BUILD_INFO_H_
