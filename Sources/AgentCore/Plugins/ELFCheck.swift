import Glibc

/// Checks that a file is a whole ELF shared object for this machine before
/// `dlopen` maps it. The dynamic loader maps a plugin's segments straight
/// from the file: a segment that reaches past the end of a truncated file
/// (a half-copied upgrade) is a SIGBUS inside dlopen, which no error
/// handling survives. Here every header and every segment must lie within
/// the file's size, so such a file is a clear error instead.
///
/// Pure: it sees the file only through `read(offset, count)`.
struct ELFCheck {
    /// ELF64 sizes and codes (the System V ABI, `elf.h`).
    private enum ELF {
        static let headerSize = 64
        static let programHeaderSize = 56
        static let sectionHeaderSize = 64
        static let classELF64: UInt8 = 2
        static let dataLittleEndian: UInt8 = 1
        static let typeSharedObject: UInt16 = 3
        static let segmentLoad: UInt32 = 1
        static let segmentDynamic: UInt32 = 2
        #if arch(x86_64)
            static let machine: UInt16 = 62  // EM_X86_64
            static let machineName = "x86-64"
        #elseif arch(arm64)
            static let machine: UInt16 = 183  // EM_AARCH64
            static let machineName = "AArch64"
        #else
            static let machine: UInt16 = 0
            static let machineName = "this machine"
        #endif
    }

    /// The file's size in bytes.
    let size: Int
    /// Reads `count` bytes at `offset`; nil when it cannot.
    let read: (_ offset: Int, _ count: Int) -> [UInt8]?

    /// What is wrong with the file, or nil when it is a whole shared object for this machine.
    func problem() -> String? {
        guard let header = read(0, min(size, ELF.headerSize)), header.starts(with: [0x7F, 0x45, 0x4C, 0x46]) else {
            return "it is not an ELF file (it does not start with the ELF magic number)"
        }
        guard header.count == ELF.headerSize else { return "truncated: \(size) bytes, shorter than an ELF header" }
        guard header[4] == ELF.classELF64, header[5] == ELF.dataLittleEndian else {
            return "it is not a 64-bit little-endian ELF file"
        }
        guard Self.u16(header, 16) == ELF.typeSharedObject else { return "it is an ELF file but not a shared object" }
        guard Self.u16(header, 18) == ELF.machine else {
            return "it is built for another machine (ELF machine \(Self.u16(header, 18)), not \(ELF.machineName))"
        }
        let programOffset = Self.u64(header, 32)
        let sectionOffset = Self.u64(header, 40)
        let programCount = Int(Self.u16(header, 56))
        let sectionCount = Int(Self.u16(header, 60))
        guard Self.u16(header, 54) == ELF.programHeaderSize, programCount > 0 else {
            return "its program headers are missing or malformed"
        }
        if let problem = within(programOffset, programCount * ELF.programHeaderSize, what: "the program header table") {
            return problem
        }
        guard let table = read(Int(programOffset), programCount * ELF.programHeaderSize) else {
            return "its program headers cannot be read"
        }
        var hasDynamic = false
        for index in 0..<programCount {
            let entry = index * ELF.programHeaderSize
            let type = Self.u32(table, entry)
            let offset = Self.u64(table, entry + 8)
            let fileSize = Self.u64(table, entry + 32)
            let memorySize = Self.u64(table, entry + 40)
            if type == ELF.segmentDynamic { hasDynamic = true }
            if type == ELF.segmentLoad && fileSize > memorySize {
                return "segment \(index) is larger in the file than in memory"
            }
            guard type == ELF.segmentLoad || type == ELF.segmentDynamic || fileSize > 0 else { continue }
            if let problem = within(offset, fileSize, what: "segment \(index)") { return problem }
        }
        guard hasDynamic else { return "it has no dynamic section (not a shared library)" }
        if sectionCount > 0, Self.u16(header, 58) == ELF.sectionHeaderSize,
            let problem = within(
                sectionOffset, UInt64(sectionCount * ELF.sectionHeaderSize), what: "the section header table")
        {
            return problem
        }
        return nil
    }

    /// A problem if `count` bytes at `offset` do not lie within the file.
    private func within(_ offset: UInt64, _ count: some BinaryInteger, what: String) -> String? {
        let (end, overflow) = offset.addingReportingOverflow(UInt64(count))
        guard overflow || end > UInt64(size) else { return nil }
        return
            "truncated: \(what) ends at byte \(overflow ? "beyond 2^64" : String(end)) but the file has \(size) bytes"
    }

    private static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }

    private static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    private static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }
}

extension ELFCheck {
    /// The check over the open file `fd` (read with pread).
    static func problem(fd: Int32) -> String? {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return "cannot stat it: \(String(cString: strerror(errno)))" }
        let check = ELFCheck(size: Int(status.st_size)) { offset, count in
            guard count >= 0, count <= 1 << 24 else { return nil }
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes[done...].withUnsafeMutableBytes {
                    pread(fd, $0.baseAddress, $0.count, off_t(offset + done))
                }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return nil }
                done += got
            }
            return bytes
        }
        return check.problem()
    }
}
