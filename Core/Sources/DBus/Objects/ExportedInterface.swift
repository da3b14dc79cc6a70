/// A named argument of a method or signal, for signatures and introspection.
public struct DBusArgument: Sendable, Hashable {
    /// The argument's name in introspection data (optional).
    public var name: String?
    /// Its type.
    public var type: DBusType

    /// An argument of `type`, optionally named.
    public init(_ name: String? = nil, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// What a method handler receives: the call (with its sender), and the connection to make further calls on.
public struct DBusMethodCall: Sendable {
    /// The incoming method call message.
    public let message: DBusMessage
    /// The connection the call arrived on; handlers may await other calls on it while it keeps serving.
    public let connection: DBusConnection
    /// Holds the call's signals until its reply is sent (`nil` outside the object server).
    let context: CallContext?

    init(message: DBusMessage, connection: DBusConnection, context: CallContext? = nil) {
        self.message = message
        self.connection = connection
        self.context = context
    }

    /// The caller's unique name (e.g. bluetoothd's `:1.7`); compare it to refuse other callers.
    public var sender: String { message.sender ?? "" }
    /// The object path called.
    public var path: ObjectPath { message.path ?? .root }
    /// The interface named by the caller (may be `nil` in D-Bus calls).
    public var interface: String? { message.interface }
    /// The method name.
    public var member: String { message.member ?? "" }

    /// Runs `work` once the reply to this call (success or error) and the signals held back for it are queued.
    ///
    /// Use it for effects that must reach clients after the reply, beyond the object server's own signals (which
    /// are held back anyway, see ``ObjectServer``): e.g. `call.afterReply { try? connection.emitSignal(...) }`.
    /// Work registered after the reply was sent runs at once on a task of its own.
    public func afterReply(_ work: @escaping @Sendable () async -> Void) {
        if let context { context.addAfterReply(work) } else { Task { await work() } }
    }

    /// Sends now the signals the object server has held back for this call so far (they otherwise leave right
    /// after the reply); for a handler that must announce a change before it replies, as bluetoothd's `Connect`
    /// announces `Connected` before its (later) reply. Signals emitted afterwards are held again.
    public func flushSignals() {
        guard let context else { return }
        connection.objects.send(context.take(close: false))
    }

    /// The decoded arguments.
    public func arguments() throws(DBusMarshalError) -> [DBusValue] { try message.arguments() }

    /// The arguments as typed values (see ``DBusMessage/decode(_:)``).
    public func decode<each T: DBusRepresentable>(
        _ types: repeat (each T).Type
    ) throws(DBusMarshalError)
        -> (repeat each T)
    {
        try message.decode(repeat each types)
    }
}

/// A method of an exported interface: its arguments and its handler.
public struct ExportedMethod: Sendable {
    /// Handles one call: returns the reply's arguments, or throws a ``DBusError`` to send that error reply (any
    /// other error becomes `org.freedesktop.DBus.Error.Failed`, a ``DBusMarshalError`` becomes `InvalidArgs`).
    public typealias Handler = @Sendable (DBusMethodCall) async throws -> [DBusValue]

    /// The method name.
    public let name: String
    /// The input arguments (calls with another signature get `InvalidArgs`).
    public let inputs: [DBusArgument]
    /// The output arguments (replies are checked against them).
    public let outputs: [DBusArgument]
    /// The handler.
    public let handler: Handler

    let inputSignature: String
    let outputSignature: String

    /// A method with typed arguments.
    public init(
        _ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [], handler: @escaping Handler
    )
        throws(DBusMarshalError)
    {
        try LibDBus.validate(name, as: .member)
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
        inputSignature = try DBusSignature(inputs.map(\.type)).rawValue
        outputSignature = try DBusSignature(outputs.map(\.type)).rawValue
    }

    /// A method with unnamed arguments given as signatures: `try ExportedMethod("Echo", in: "v", out: "v") { ... }`.
    public init(
        _ name: String, in inputs: String, out outputs: String, handler: @escaping Handler
    )
        throws(DBusMarshalError)
    {
        try self.init(
            name, inputs: DBusSignature(inputs).types.map { DBusArgument(nil, $0) },
            outputs: DBusSignature(outputs).types.map { DBusArgument(nil, $0) }, handler: handler)
    }
}

/// A property of an exported interface: its type, access and change signalling.
public struct ExportedProperty: Sendable {
    /// Who may read or write the property over D-Bus.
    public enum Access: String, Sendable, Hashable {
        /// Readable only (`Set` gets `PropertyReadOnly`).
        case read
        /// Writable only (`Get` gets `AccessDenied`; omitted from `GetAll`).
        case write
        /// Readable and writable.
        case readWrite = "readwrite"
    }

    /// How changes are announced (`org.freedesktop.DBus.Property.EmitsChangedSignal`).
    public enum ChangeSignal: String, Sendable, Hashable {
        /// `PropertiesChanged` carries the new value.
        case emitsValue = "true"
        /// `PropertiesChanged` lists the property as invalidated, without the value.
        case invalidates = "invalidates"
        /// The value never changes.
        case constant = "const"
        /// No signal.
        case none = "false"
    }

    /// Validates or applies a remote `Set` before the requested value is stored; throw a ``DBusError`` to refuse
    /// it. `PropertiesChanged` follows the reply, and only if the value changed.
    public typealias Setter = @Sendable (DBusValue, DBusMethodCall) async throws -> Void

    /// Applies a remote `Set` and decides what is stored: returns the value to store and report (it may differ
    /// from the requested one, e.g. a device's `Name` when `Alias` is set to ""), or `nil` to store nothing (the
    /// setter changed the properties itself, or refused silently). Throw a ``DBusError`` to refuse the call.
    ///
    /// `PropertiesChanged` is emitted only if the stored value changed, after the reply; changes the setter makes
    /// with ``ObjectServer/setProperties(_:interface:at:)`` on the same interface fold into that one signal.
    public typealias Update = @Sendable (_ requested: DBusValue, DBusMethodCall) async throws -> DBusValue?

    /// The property name.
    public let name: String
    /// Its type; values of any other type are refused.
    public let type: DBusType
    /// Who may read or write it.
    public let access: Access
    /// How changes are announced.
    public let changeSignal: ChangeSignal
    /// The initial value, or `nil` for "absent" (not listed by `GetAll`, `Get` fails).
    public let initialValue: DBusValue?
    /// Called on a remote `Set` after its type was checked; `nil` accepts every well-typed value (or ``update`` decides).
    public let setter: Setter?
    /// Called on a remote `Set` after its type was checked, and decides what is stored (see ``Update``).
    public private(set) var update: Update?

    /// A property; `value`, if given, must have type `type`.
    public init(
        _ name: String, type: DBusType, access: Access = .read, value: DBusValue? = nil,
        changeSignal: ChangeSignal = .emitsValue, setter: Setter? = nil
    ) throws(DBusMarshalError) {
        try LibDBus.validate(name, as: .member)
        if let value, value.type != type {
            throw .typeMismatch(expected: type.signature, actual: value.signature)
        }
        self.name = name
        self.type = type
        self.access = access
        self.changeSignal = changeSignal
        initialValue = value
        self.setter = setter
        update = nil
    }

    /// A writable property whose remote `Set` goes through `update`, which chooses the value stored (see
    /// ``Update``):
    /// ```swift
    /// try ExportedProperty.writable("Alias", type: .string, value: "hall") { requested, _ in
    ///     requested == "" ? .string(deviceName) : requested
    /// }
    /// ```
    public static func writable(
        _ name: String, type: DBusType, access: Access = .readWrite, value: DBusValue? = nil,
        changeSignal: ChangeSignal = .emitsValue, update: @escaping Update
    ) throws(DBusMarshalError) -> ExportedProperty {
        var property = try ExportedProperty(
            name, type: type, access: access, value: value, changeSignal: changeSignal, setter: nil)
        property.update = update
        return property
    }

    var isReadable: Bool { access != .write }
    var isWritable: Bool { access != .read }
}

/// A signal an interface declares (for introspection; emit it with ``DBusConnection/emitSignal(path:interface:member:arguments:destination:)``).
public struct ExportedSignal: Sendable {
    /// The signal name.
    public let name: String
    /// Its arguments.
    public let arguments: [DBusArgument]

    /// A signal declaration.
    public init(_ name: String, arguments: [DBusArgument] = []) throws(DBusMarshalError) {
        try LibDBus.validate(name, as: .member)
        self.name = name
        self.arguments = arguments
    }
}

/// An interface an object exports: a description (name, methods, properties, signals) plus method handlers.
///
/// The same description drives call dispatch, argument checks, `org.freedesktop.DBus.Properties`,
/// `ObjectManager` contents and the introspection XML.
public struct ExportedInterface: Sendable {
    /// The interface name, e.g. `org.bluez.GattCharacteristic1`.
    public let name: String
    /// Its methods.
    public let methods: [ExportedMethod]
    /// Its properties.
    public let properties: [ExportedProperty]
    /// Its signals.
    public let signals: [ExportedSignal]

    /// An interface; names are validated and must be unique within their kind.
    public init(
        _ name: String, methods: [ExportedMethod] = [], properties: [ExportedProperty] = [],
        signals: [ExportedSignal] = []
    ) throws {
        try LibDBus.validate(name, as: .interface)
        guard Set(methods.map(\.name)).count == methods.count, Set(properties.map(\.name)).count == properties.count
        else { throw DBusError(.invalidArgs, "duplicate method or property name in \(name)") }
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    func method(_ name: String) -> ExportedMethod? { methods.first { $0.name == name } }
    func property(_ name: String) -> ExportedProperty? { properties.first { $0.name == name } }
}
