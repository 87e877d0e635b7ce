/* sha256.h - the SHA-256 of a byte buffer, as lowercase hex.
 *
 * verdict.json records the sha256 of the bounds file (a contract: bounds
 * {file, sha256}) so a reviewer can tell which bounds a CI verdict was
 * judged against. The digest comes from libgcrypt; the report's CSP hashes
 * are computed at build time and need none. */
#ifndef CP_SHA256_H
#define CP_SHA256_H

#include <stddef.h>

/* Writes the digest of data[0..len) as 64 lowercase hex digits plus NUL to
 * hex; "" when the library cannot be initialised. */
void cp_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
