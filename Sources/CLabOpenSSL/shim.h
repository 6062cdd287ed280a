// The parts of OpenSSL 3's C API that Swift cannot call directly: variadic functions and
// function-like macros get `static inline c_lab_*` wrappers here.
#ifndef C_LAB_OPENSSL_SHIM_H
#define C_LAB_OPENSSL_SHIM_H

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/opensslv.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

/// `EVP_PKEY_Q_keygen(NULL, NULL, "RSA", bits)`: the variadic call, fixed to RSA.
static inline EVP_PKEY *c_lab_keygen_rsa(OSSL_LIB_CTX *libctx, size_t bits) {
    return EVP_PKEY_Q_keygen(libctx, NULL, "RSA", bits);
}

/// `EVP_PKEY_Q_keygen(NULL, NULL, type)` for key types without parameters (X25519, ED25519).
static inline EVP_PKEY *c_lab_keygen_named(OSSL_LIB_CTX *libctx, const char *type) {
    return EVP_PKEY_Q_keygen(libctx, NULL, type);
}

/// `OPENSSL_free` is a macro.
static inline void c_lab_openssl_free(void *pointer) {
    OPENSSL_free(pointer);
}

/// The runtime library's version text, e.g. "OpenSSL 3.0.19 27 Jan 2026".
static inline const char *c_lab_openssl_version(void) {
    return OpenSSL_version(OPENSSL_VERSION);
}

/// Sets the GCM IV length (a ctrl call, kept here so Swift needs no casts).
static inline int c_lab_gcm_set_ivlen(EVP_CIPHER_CTX *ctx, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, length, NULL);
}

static inline int c_lab_gcm_get_tag(EVP_CIPHER_CTX *ctx, unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, length, tag);
}

static inline int c_lab_gcm_set_tag(EVP_CIPHER_CTX *ctx, const unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, length, (void *)tag);
}

#endif
