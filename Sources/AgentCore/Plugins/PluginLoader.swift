import ControlProtocol
import Glibc
import RoleKit
import Synchronization

/// Loads role plugins the BlueZ way, adapted to Swift. Before any code is
/// mapped: the file and every directory on its path must be changeable only
/// by root or the agent's user (``PluginTrust``), and the file must be a
/// whole ELF shared object for this machine (``ELFCheck``). Then `dlopen`
/// with `RTLD_NOW | RTLD_LOCAL`, the ABI version read through its own C
/// symbol before anything else, then the descriptor, checked for its type,
/// name, namespace and role. Libraries are never closed (Swift code cannot
/// be unloaded); a plugin loaded once is reused from then on.
public final class PluginLoader: Sendable {
    private typealias ABIVersionFunction = @convention(c) () -> UInt32
    private typealias DescriptorFunction = @convention(c) () -> UnsafeMutableRawPointer?

    private let descriptors = Mutex<[String: PluginDescriptor]>([:])

    /// A loader with nothing loaded.
    public init() {}

    /// The path the plugin `name` is loaded from: `<directory>/lib<name>.so`.
    public static func path(ofPlugin name: String, in directory: String) -> String {
        "\(directory.hasSuffix("/") ? String(directory.dropLast()) : directory)/\(PluginABI.fileName(ofPlugin: name))"
    }

    /// Whether `name` is a bare plugin name (no `/`, no NUL, no leading `.`, not empty).
    public static func isPluginName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && !name.contains("\0") && !name.hasPrefix(".")
    }

    /// The descriptor of the plugin `name` from `directory` (an absolute
    /// path), checked to serve `role`.
    public func load(
        name: String, role: PluginRole, from directory: String
    ) throws(PluginLoadError)
        -> PluginDescriptor
    {
        guard Self.isPluginName(name) else { throw .badName(name) }
        let path = Self.path(ofPlugin: name, in: directory)
        // Checked at every load, also of a plugin already in memory: a reload then says so
        // when someone has since made the plugin's directory writable by others.
        try PluginTrust.current.check(file: path)
        let descriptor = try descriptors.withLock { cache throws(PluginLoadError) -> PluginDescriptor in
            if let known = cache[path] { return known }
            let fresh = try Self.open(path: path, name: name)
            cache[path] = fresh
            return fresh
        }
        guard descriptor.roles.contains(role) else {
            throw .wrongRole(path: path, serves: PluginRole.allCases.filter(descriptor.roles.contains), wanted: role)
        }
        return descriptor
    }

    private static func open(path: String, name: String) throws(PluginLoadError) -> PluginDescriptor {
        var status = stat()
        if stat(path, &status) != 0 && errno == ENOENT { throw .fileMissing(path: path) }
        try checkELF(path)
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw .notLoadable(path: path, reason: lastDynamicLinkerError())
        }
        // Never dlclose(handle): the plugin's Swift metadata stays registered.
        let versionFunction: ABIVersionFunction = try symbol(PluginABI.abiVersionSymbol, in: handle, path: path)
        let version = versionFunction()
        guard version == PluginABI.version else {
            throw .abiMismatch(path: path, plugin: version, agent: PluginABI.version)
        }
        let descriptorFunction: DescriptorFunction = try symbol(PluginABI.descriptorSymbol, in: handle, path: path)
        guard let pointer = descriptorFunction(),
            let descriptor = Unmanaged<AnyObject>.fromOpaque(pointer).takeRetainedValue() as? PluginDescriptor,
            descriptor.abiVersion == PluginABI.version
        else { throw .notADescriptor(path: path) }
        guard descriptor.name == name else {
            throw .nameMismatch(path: path, declared: descriptor.name, configured: name)
        }
        guard isNamespace(descriptor.namespace) else {
            throw .badNamespace(path: path, namespace: descriptor.namespace)
        }
        return descriptor
    }

    private static func checkELF(_ path: String) throws(PluginLoadError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .notLoadable(path: path, reason: "cannot open it: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        if let problem = ELFCheck.problem(fd: fd) { throw .malformed(path: path, reason: problem) }
    }

    private static func symbol<Function>(
        _ name: String, in handle: UnsafeMutableRawPointer, path: String
    )
        throws(PluginLoadError) -> Function
    {
        _ = dlerror()
        guard let address = dlsym(handle, name) else { throw .missingSymbol(path: path, symbol: name) }
        return unsafeBitCast(address, to: Function.self)
    }

    /// A plugin namespace: a lower-case ASCII identifier (letters, digits,
    /// `_`, starting with a letter) that the agent does not reserve.
    static func isNamespace(_ namespace: String) -> Bool {
        guard let first = namespace.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
            return false
        }
        let allowed = namespace.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
        return allowed && !ControlAPI.reservedNamespaces.contains(namespace)
    }

    private static func lastDynamicLinkerError() -> String {
        guard let message = dlerror() else { return "unknown dlopen error" }
        return String(cString: message)
    }
}
