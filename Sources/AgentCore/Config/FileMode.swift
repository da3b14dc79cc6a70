import JSON

/// Parses `control.mode`: a string of three or four octal digits, at most
/// "0777", that lets the owner read and write.
enum FileMode {
    static func parse(_ json: JSON, issue: (String) -> Void) -> UInt32? {
        guard let text = json.stringValue else {
            issue("expected a string of octal digits such as \"0600\", found \(kindName(of: json))")
            return nil
        }
        let digits = Array(text.utf8)
        guard (3...4).contains(digits.count),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "7")).contains($0) })
        else {
            issue("\"\(text)\" is not an octal file mode (three or four digits 0-7, such as \"0600\")")
            return nil
        }
        let mode = digits.reduce(UInt32(0)) { $0 * 8 + UInt32($1 - UInt8(ascii: "0")) }
        guard mode <= 0o777 else {
            issue("\"\(text)\" sets special bits (setuid, setgid or sticky); use at most \"0777\"")
            return nil
        }
        guard mode & 0o600 == 0o600 else {
            issue("\"\(text)\" does not let the owner read and write the socket; it must include 0600")
            return nil
        }
        return mode
    }
}
