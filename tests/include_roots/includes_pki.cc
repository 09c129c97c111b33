// The probe of IncludeRoots.* (tests/CMakeLists.txt): compiles only for a
// target that links fedberry::pki, whose include root holds this header.
#include "pki/fleet_pki.h"

int main() { return 0; }
