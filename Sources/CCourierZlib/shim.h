#ifndef C_COURIER_ZLIB_H
#define C_COURIER_ZLIB_H
// zlib, for DeflateRequestCompressor and the test server's compression routes. Debian's
// zlib1g-dev and every Apple SDK provide the header.
#include <zlib.h>
#endif
