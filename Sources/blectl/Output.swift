import ControlProtocol
import Glibc
import JSON

/// Everything a command needs to run: the client maker and the output mode.
struct RunContext {
    let socketPath: String
    let json: Bool

    func connect() throws(ClientFailure) -> ControlClient { try ControlClient(path: socketPath) }

    /// Prints a line (or lines) on stdout.
    func print(_ text: String) { Output.write(1, text + "\n") }

    /// Prints `result` raw (--json: compact) or as the human `render` gives it.
    func show(_ result: JSON, human render: (JSON) -> String) {
        print(json ? result.serialized(.compact) : render(result))
    }
}

/// Writing to stdout and stderr without Foundation or C stdio globals.
enum Output {
    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Two columns: names padded to the widest.
    static func table(_ rows: [(String, String)]) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(to: width) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// Columns with a header row, each padded to its widest cell.
    static func grid(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in
            all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        return all.map { row in
            row.enumerated().map { index, cell in index == row.count - 1 ? cell : cell.padding(to: widths[index]) }
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// A JSON value as text for a table cell: strings bare, others as JSON.
    /// A `services` result (central.services, peripheral.services) as a table.
    static func servicesGrid(_ result: JSON) -> String {
        var rows: [[String]] = []
        for service in result["services"]?.arrayValue ?? [] {
            rows.append(["service", cell(service["uuid"]), ""])
            for characteristic in service["characteristics"]?.arrayValue ?? [] {
                let properties = (characteristic["properties"]?.arrayValue ?? []).map(cell)
                rows.append(["  characteristic", cell(characteristic["uuid"]), properties.joined(separator: ",")])
            }
        }
        return grid(["KIND", "UUID", "PROPERTIES"], rows)
    }

    static func cell(_ value: JSON?) -> String {
        guard let value, value != .null else { return "-" }
        return value.stringValue ?? value.serialized()
    }

    /// `3s`, `2m05s`, `1h02m03s`.
    static func duration(seconds: Int64) -> String {
        let hours = seconds / 3600
        let minutes = seconds % 3600 / 60
        let rest = seconds % 60
        if hours > 0 { return "\(hours)h\(twoDigits(minutes))m\(twoDigits(rest))s" }
        if minutes > 0 { return "\(minutes)m\(twoDigits(rest))s" }
        return "\(rest)s"
    }

    private static func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
