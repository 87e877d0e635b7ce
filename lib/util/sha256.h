/* sha256.h - SHA-256 (FIPS 180-4) of a byte buffer.
 *
 * verdict.json records the sha256 of the bounds file so a reviewer can tell
 * which bounds a CI verdict was judged against. None of the fixed libraries
 * (libbpf, libelf/libdw, jansson, libc) exports a hash, so this is a compact
 * self-contained implementation written from the standard. */
#ifndef CP_SHA256_H
#define CP_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 32-byte digest of data[0..len) to out. */
void cp_sha256(const void *data, size_t len, uint8_t out[32]);

/* Writes the digest as 64 lowercase hex digits plus NUL to hex. */
void cp_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
