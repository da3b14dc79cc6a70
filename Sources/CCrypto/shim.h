// Debian's libcrypto (OpenSSL 3, libssl-dev) for AES-128-CCM, the cipher of
// encrypted BTHome v2 advertisements. Swift calls only the function below, so
// every EVP call, its error handling and the context's lifetime stay here.
#ifndef BLEAGENT_CCRYPTO_SHIM_H
#define BLEAGENT_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

/// The result of `ccrypto_aes128_ccm`.
enum ccrypto_status {
    /// Done: `output` (and, when sealing, `tag`) hold the result.
    CCRYPTO_OK = 0,
    /// Opening only: the tag does not match (wrong key, nonce or data).
    CCRYPTO_AUTHENTICATION_FAILED = 1,
    /// libcrypto refused a step (a length it does not allow, out of memory).
    CCRYPTO_FAILED = 2,
};

/// AES-128 in CCM mode (RFC 3610, NIST SP 800-38C), without associated data.
///
/// Seals (`seal` != 0): encrypts `length` bytes of `input` into `output` and
/// writes the `tag_length`-byte tag to `tag`. Opens (`seal` == 0): checks
/// `tag` and decrypts `input` into `output`; nothing in `output` may be used
/// unless the result is CCRYPTO_OK. `key` is 16 bytes; `nonce_length` 7...13;
/// `tag_length` 4, 6, ... 16; `output` has room for `length` bytes.
static inline int ccrypto_aes128_ccm(int seal, const uint8_t *key, const uint8_t *nonce, size_t nonce_length,
                                     const uint8_t *input, size_t length, uint8_t *output, uint8_t *tag,
                                     size_t tag_length) {
    if (length > INT32_MAX) return CCRYPTO_FAILED;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return CCRYPTO_FAILED;
    int status = CCRYPTO_FAILED;
    int written = 0;
    uint8_t empty = 0;
    if (EVP_CipherInit_ex(context, EVP_aes_128_ccm(), NULL, NULL, NULL, seal) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, (int)nonce_length, NULL) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, (int)tag_length, seal ? NULL : tag) != 1) goto done;
    if (EVP_CipherInit_ex(context, NULL, NULL, key, nonce, seal) != 1) goto done;
    // CCM must be told the total length before the data.
    if (EVP_CipherUpdate(context, NULL, &written, NULL, (int)length) != 1) goto done;
    if (EVP_CipherUpdate(context, length > 0 ? output : &empty, &written, length > 0 ? input : &empty,
                         (int)length) != 1) {
        // For CCM the one update that opens also checks the tag.
        status = seal ? CCRYPTO_FAILED : CCRYPTO_AUTHENTICATION_FAILED;
        goto done;
    }
    if (seal) {
        if (EVP_CipherFinal_ex(context, output + written, &written) != 1) goto done;
        if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, (int)tag_length, tag) != 1) goto done;
    }
    status = CCRYPTO_OK;
done:
    EVP_CIPHER_CTX_free(context);
    return status;
}

#endif
