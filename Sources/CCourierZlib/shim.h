#ifndef C_COURIER_ZLIB_H
#define C_COURIER_ZLIB_H
// zlib, for the test server's /gzip and /deflate routes. Debian's zlib1g-dev and every
// Apple SDK provide the header.
#include <zlib.h>
#endif
