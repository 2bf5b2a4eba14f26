// <rplasma/client.h>: what an application includes to use rplasma's client library from the
// installed package. rplasma::Client (connect to the local store, create/seal/put, zero-copy get,
// fetch through the local manager) and ObjectChecksum, for the calls that take a checksum.
// docs/CLIENT.md describes the API; docs/QUICKSTART.md builds a program against the package.
//
// This file is installed as include/rplasma/client.h; the headers it includes are the public set
// of client/package/CMakeLists.txt, installed under include/rplasma/ with their includes rewritten.
#ifndef RPLASMA_CLIENT_H_
#define RPLASMA_CLIENT_H_

#include "client/checksum.h"
#include "client/client.h"

#endif  // RPLASMA_CLIENT_H_
