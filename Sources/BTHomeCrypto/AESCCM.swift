import CCrypto

/// AES-128 in CCM mode without associated data, from Debian's libcrypto
/// (`Sources/CCrypto`): the cipher of encrypted BTHome v2 advertisements.
public enum AESCCM {
    /// Encrypts `plaintext` under `key` (16 bytes) and `nonce` (7...13 bytes)
    /// and returns the ciphertext and its `tagLength`-byte tag.
    public static func seal(
        key: [UInt8], nonce: [UInt8], plaintext: [UInt8], tagLength: Int
    ) throws(AESCCMError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try check(key: key, nonce: nonce, tagLength: tagLength)
        var output = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagLength)
        let status = output.withUnsafeMutableBufferPointer { out in
            tag.withUnsafeMutableBufferPointer { tagBuffer in
                ccrypto_aes128_ccm(
                    1, key, nonce, nonce.count, plaintext, plaintext.count, out.baseAddress, tagBuffer.baseAddress,
                    tagLength)
            }
        }
        guard status == Int32(CCRYPTO_OK.rawValue) else { throw .libcrypto }
        return (output, tag)
    }

    /// Checks `tag` and decrypts `ciphertext` under `key` and `nonce`.
    ///
    /// - Throws: ``AESCCMError/authenticationFailed`` when the tag does not
    ///   match (a wrong key, another nonce, altered data).
    public static func open(
        key: [UInt8], nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]
    ) throws(AESCCMError) -> [UInt8] {
        try check(key: key, nonce: nonce, tagLength: tag.count)
        var output = [UInt8](repeating: 0, count: ciphertext.count)
        var expected = tag
        let status = output.withUnsafeMutableBufferPointer { out in
            expected.withUnsafeMutableBufferPointer { tagBuffer in
                ccrypto_aes128_ccm(
                    0, key, nonce, nonce.count, ciphertext, ciphertext.count, out.baseAddress, tagBuffer.baseAddress,
                    tagBuffer.count)
            }
        }
        switch status {
        case Int32(CCRYPTO_OK.rawValue): return output
        case Int32(CCRYPTO_AUTHENTICATION_FAILED.rawValue): throw .authenticationFailed
        default: throw .libcrypto
        }
    }

    private static func check(key: [UInt8], nonce: [UInt8], tagLength: Int) throws(AESCCMError) {
        guard key.count == 16 else { throw .badLength("key", key.count) }
        guard (7...13).contains(nonce.count) else { throw .badLength("nonce", nonce.count) }
        guard (4...16).contains(tagLength), tagLength % 2 == 0 else { throw .badLength("tag", tagLength) }
    }
}

/// Why AES-CCM could not seal or open.
public enum AESCCMError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The tag does not match: wrong key, wrong nonce or altered data.
    case authenticationFailed
    /// A key (16), nonce (7...13) or tag (4...16, even) of another length.
    case badLength(String, Int)
    /// libcrypto refused a step.
    case libcrypto

    /// One sentence.
    public var description: String {
        switch self {
        case .authenticationFailed: "the message authentication code does not match"
        case .badLength(let what, let count): "AES-CCM \(what) of \(count) bytes is not allowed"
        case .libcrypto: "libcrypto refused an AES-CCM step"
        }
    }
}
