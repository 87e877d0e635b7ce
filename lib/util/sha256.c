/* sha256.c - see sha256.h. */
#include <gcrypt.h>
#include <pthread.h>
#include <stdio.h>

#include "sha256.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_ok;

/* libgcrypt must be initialised once before use, and not by two threads
 * at once (compare digests run files on several threads); only a hash is
 * used here, so no secure memory is needed. */
static void init(void)
{
	if (!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
		if (!gcry_check_version(NULL))
			return;
		gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
		gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	}
	init_ok = 1;
}

void cp_sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char digest[32];

	hex[0] = '\0';
	pthread_once(&init_once, init);
	if (!init_ok)
		return;
	gcry_md_hash_buffer(GCRY_MD_SHA256, digest, data, len);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}
