import Glibc

/// Who may have changed a plugin before the agent runs its code, checked the
/// way sshd's StrictModes checks a user's files: the plugin file and every
/// directory through which its path resolves (each parent up to `/`, and
/// where a symbolic link leads) must be owned by root or by the agent's own
/// user, and none may be writable by its group or by others. A parent that
/// is writable by others is accepted only with the sticky bit (as `/tmp`):
/// there nobody can rename or remove an entry they do not own, and the
/// entry itself is checked next. The plugin directory itself may not be
/// writable by anyone else, sticky or not.
struct PluginTrust {
    /// The uids that may own a plugin and its directories: root and the agent's effective uid.
    let owners: Set<uid_t>

    /// The rule for this process.
    static var current: PluginTrust { PluginTrust(owners: [0, geteuid()]) }

    /// Checks the absolute path `file`; the first problem names the path at fault.
    func check(file: String) throws(PluginLoadError) {
        var resolved: [String] = []
        var pending = Array(file.split(separator: "/").map(String.init).reversed())
        var hops = 0
        try checkDirectory("/", isPluginDirectory: pending.count == 1, file: file)
        while let name = pending.popLast() {
            if name == "." { continue }
            if name == ".." {
                _ = resolved.popLast()
                continue
            }
            let path = "/" + (resolved + [name]).joined(separator: "/")
            var status = stat()
            guard lstat(path, &status) == 0 else { throw .fileMissing(path: file) }
            if status.st_mode & S_IFMT == S_IFLNK {
                hops += 1
                guard hops <= 32, let target = Self.linkTarget(path) else {
                    throw .untrusted(path: file, reason: "\(path): too many symbolic links")
                }
                if target.hasPrefix("/") { resolved = [] }
                pending += target.split(separator: "/").map(String.init).reversed()
                continue
            }
            resolved.append(name)
            if pending.isEmpty {
                guard status.st_mode & S_IFMT == S_IFREG else {
                    throw .untrusted(path: file, reason: "\(path) is not a regular file")
                }
                try checkOwnerAndMode(path, status, file: file, stickyAllowed: false)
            } else {
                guard status.st_mode & S_IFMT == S_IFDIR else { throw .fileMissing(path: file) }
                // With only the file's name left, this is the plugin directory: no sticky exception.
                try checkOwnerAndMode(path, status, file: file, stickyAllowed: pending.count != 1)
            }
        }
    }

    private func checkDirectory(_ path: String, isPluginDirectory: Bool, file: String) throws(PluginLoadError) {
        var status = stat()
        guard stat(path, &status) == 0 else { throw .fileMissing(path: file) }
        try checkOwnerAndMode(path, status, file: file, stickyAllowed: !isPluginDirectory)
    }

    private func checkOwnerAndMode(
        _ path: String, _ status: stat, file: String, stickyAllowed: Bool
    ) throws(PluginLoadError) {
        let mode = status.st_mode & 0o7777
        let octal = "0" + String(mode, radix: 8)
        let fix = "only root or the agent's user (uid \(geteuid())) may be able to change a plugin"
        guard owners.contains(status.st_uid) else {
            throw .untrusted(
                path: file,
                reason: "\(path) is owned by uid \(status.st_uid), not by root or the agent's user (uid \(geteuid()))")
        }
        let sticky = stickyAllowed && mode & S_ISVTX != 0
        if mode & S_IWOTH != 0 && !sticky {
            throw .untrusted(path: file, reason: "\(path) is writable by others (mode \(octal)); \(fix)")
        }
        if mode & S_IWGRP != 0 && !sticky {
            throw .untrusted(path: file, reason: "\(path) is writable by its group (mode \(octal)); \(fix)")
        }
    }

    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
