import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under /tmp for one test.
func temporaryDirectory() throws -> String {
    var template = Array("/tmp/bletests-XXXXXX".utf8CString)
    let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    try #require(result != nil)
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
