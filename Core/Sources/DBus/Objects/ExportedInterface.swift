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

    /// The caller's unique name (e.g. bluetoothd's `:1.7`); compare it to refuse other callers.
    public var sender: String { message.sender ?? "" }
    /// The object path called.
    public var path: ObjectPath { message.path ?? .root }
    /// The interface named by the caller (may be `nil` in D-Bus calls).
    public var interface: String? { message.interface }
    /// The method name.
    public var member: String { message.member ?? "" }

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

    /// Validates or applies a remote `Set` before the value is stored; throw a ``DBusError`` to refuse it.
    public typealias Setter = @Sendable (DBusValue, DBusMethodCall) async throws -> Void

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
    /// Called on a remote `Set` after its type was checked; `nil` accepts every well-typed value.
    public let setter: Setter?

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
