import Glibc

/// Looks up a group in the system's group database (getgrnam_r: /etc/group
/// or whatever NSS names), for `control.group`.
enum GroupDatabase {
    /// The gid of the group called `name`; nil when no such group exists or
    /// the database could not be read.
    static func gid(named name: String) -> UInt32? {
        var group = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var size = 1024
        while size <= 1 << 20 {
            var buffer = [CChar](repeating: 0, count: size)
            let status = getgrnam_r(name, &group, &buffer, size, &result)
            if status == ERANGE {
                size *= 4
                continue
            }
            guard status == 0, let found = result else { return nil }
            return UInt32(found.pointee.gr_gid)
        }
        return nil
    }
}
