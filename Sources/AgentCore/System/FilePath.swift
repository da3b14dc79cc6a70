#if canImport(Glibc)
    import Glibc
#endif

/// Path arithmetic for config paths (no normalisation beyond what is needed).
enum FilePath {
    /// The process's working directory ("/" if it cannot be read).
    static func currentDirectory() -> String {
        guard let pointer = getcwd(nil, 0) else { return "/" }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// `path` if absolute, else `path` under `directory`, without `./` segments.
    static func absolute(_ path: String, relativeTo directory: String) -> String {
        if path.hasPrefix("/") { return path }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var rest = Substring(path)
        while rest.hasPrefix("./") { rest = rest.dropFirst(2) }
        if rest == "." { rest = "" }
        return rest.isEmpty ? (base.isEmpty ? "/" : base) : "\(base)/\(rest)"
    }

    /// The directory part of an absolute path (`/` for a file at the root).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = path[..<slash]
        return directory.isEmpty ? "/" : String(directory)
    }
}
