/// A D-Bus match rule: which messages a subscription wants.
///
/// The rule is installed on the bus with `AddMatch` (so the bus routes matching signals to us) and also evaluated
/// locally (so overlapping subscriptions each get exactly what they asked for). A `sender` given as a well-known
/// name (`org.bluez`) is matched locally against the name's current owner, which the connection tracks through
/// `NameOwnerChanged`.
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    /// The message type (`type=`); signals by default.
    public var kind: DBusMessage.Kind?
    /// The sender (`sender=`): a unique or well-known name.
    public var sender: String?
    /// The interface (`interface=`).
    public var interface: String?
    /// The member (`member=`).
    public var member: String?
    /// The exact object path (`path=`).
    public var path: ObjectPath?
    /// A path and everything below it (`path_namespace=`).
    public var pathNamespace: ObjectPath?
    /// The destination (`destination=`), for unicast signals.
    public var destination: String?
    /// String arguments that must be equal (`argN=`), by index 0...63.
    public var arguments: [Int: String]
    /// Path-like arguments (`argNpath=`): equal, or one is a `/`-terminated prefix of the other.
    public var argumentPaths: [Int: String]
    /// `arg0namespace=`: argument 0 equals this name or starts with it followed by a dot.
    public var arg0Namespace: String?

    /// A rule; every field left `nil` matches anything.
    public init(
        kind: DBusMessage.Kind? = .signal, sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil, destination: String? = nil,
        arguments: [Int: String] = [:], argumentPaths: [Int: String] = [:], arg0Namespace: String? = nil
    ) {
        self.kind = kind
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
        self.argumentPaths = argumentPaths
        self.arg0Namespace = arg0Namespace
    }

    /// The rule in the bus's text syntax, e.g. `type='signal',interface='org.freedesktop.DBus.Properties'`.
    public var ruleString: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            if let value { parts.append("\(key)=\(MatchRule.quote(value))") }
        }
        let kindText: String? =
            switch kind {
            case .methodCall: "method_call"
            case .methodReturn: "method_return"
            case .error: "error"
            case .signal: "signal"
            case nil: nil
            }
        add("type", kindText)
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("destination", destination)
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(index)", value) }
        for (index, value) in argumentPaths.sorted(by: { $0.key < $1.key }) { add("arg\(index)path", value) }
        add("arg0namespace", arg0Namespace)
        return parts.joined(separator: ",")
    }

    /// The rule string.
    public var description: String { ruleString }

    /// Quotes a value: apostrophes cannot appear inside quotes, so each becomes `'\''`.
    static func quote(_ value: String) -> String {
        "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Whether the rule needs the message's arguments to decide.
    var inspectsArguments: Bool { !arguments.isEmpty || !argumentPaths.isEmpty || arg0Namespace != nil }

    /// Local matching of the signal in `context`, which gives the owner of a well-known `sender` and decodes the
    /// arguments (only for a rule with argument conditions, at most once for all the rules it is matched against).
    /// The sender comes first: among many subscriptions it is what tells most apart.
    func matches(_ context: inout SignalMatchContext) -> Bool {
        let message = context.message
        if let kind, message.kind != kind { return false }
        if let sender {
            let expected = MatchRule.isTrackedName(sender) ? context.owner(of: sender) : sender
            guard let expected, message.sender == expected else { return false }
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, pathNamespace.isAncestor(orSelfOf: messagePath) else { return false }
        }
        if let destination, message.destination != destination { return false }
        guard inspectsArguments else { return true }
        guard let values = context.arguments() else { return false }
        for (index, expected) in arguments {
            guard index < values.count, case .string(let actual) = values[index], actual == expected else {
                return false
            }
        }
        for (index, expected) in argumentPaths {
            guard index < values.count else { return false }
            let actual: String
            switch values[index] {
            case .string(let text): actual = text
            case .objectPath(let path): actual = path.rawValue
            default: return false
            }
            let prefixMatch =
                (expected.hasSuffix("/") && actual.hasPrefix(expected))
                || (actual.hasSuffix("/") && expected.hasPrefix(actual))
            guard actual == expected || prefixMatch else { return false }
        }
        if let arg0Namespace {
            guard case .string(let actual)? = values.first,
                actual == arg0Namespace || actual.hasPrefix(arg0Namespace + ".")
            else { return false }
        }
        return true
    }

    /// Whether `name` is a well-known name other than the bus's own, whose owner must be tracked for local matching.
    static func isTrackedName(_ name: String) -> Bool {
        !name.hasPrefix(":") && name != BusNames.bus
    }
}

extension MatchRule {
    /// `PropertiesChanged` signals, optionally from one sender and below one path.
    public static func propertiesChanged(sender: String? = nil, pathNamespace: ObjectPath? = nil) -> MatchRule {
        MatchRule(
            sender: sender, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            pathNamespace: pathNamespace)
    }

    /// `InterfacesAdded` and `InterfacesRemoved` of the object manager at `path`, from `sender`.
    public static func objectManager(sender: String? = nil, path: ObjectPath? = nil) -> MatchRule {
        MatchRule(sender: sender, interface: "org.freedesktop.DBus.ObjectManager", path: path)
    }
}
