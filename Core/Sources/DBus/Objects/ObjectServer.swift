import Synchronization

/// The objects one connection exports, and the dispatcher of the method calls they receive.
///
/// State is data behind one lock: for each path, its interfaces (``ExportedInterface`` descriptions with handlers)
/// and their current property values, plus which paths are object managers. Changes made here (properties,
/// objects, interfaces) emit `PropertiesChanged`, `InterfacesAdded` and `InterfacesRemoved` in the order they
/// happen. Calls arrive from the connection's thread in order; each handler is started in that order on a task of
/// its own, so a handler may await other D-Bus calls (even calls back into this process) while others are served.
///
/// Standard interfaces are answered here: `org.freedesktop.DBus.Properties` (`Get`, `GetAll`, `Set` with access and
/// type checks), `org.freedesktop.DBus.ObjectManager` (`GetManagedObjects`, at paths given to
/// ``addObjectManager(at:authorize:)``) and `org.freedesktop.DBus.Introspectable` (XML generated from the
/// descriptions, with child nodes); `org.freedesktop.DBus.Peer` is answered by libdbus. ``style`` chooses how
/// calls are matched and refused and what the XML lists: ours (descriptive errors) or BlueZ's gdbus.
///
/// Replies come before the signals their call caused, as from bluetoothd: while a handler or setter runs, the
/// signals this server emits for it (`PropertiesChanged`, `InterfacesAdded`, `InterfacesRemoved`) are held back and
/// sent right after the reply, on the same outgoing queue; `PropertiesChanged` of one object and interface fold
/// into one signal with the values current when it leaves. ``DBusMethodCall/flushSignals()`` sends them earlier,
/// ``DBusMethodCall/afterReply(_:)`` queues other work behind the reply. Changes made outside any call are
/// announced at once, and so are those made with ``setPropertiesNow(_:interface:at:)``: a property whose every
/// change is an event (a characteristic's `Value`).
///
/// Work is bounded (``Limits``): at most `maxCallsInFlight` handlers run at once (64 by default); further calls wait
/// for a slot in arrival order, at most `maxQueuedCalls` of them (1024); a call past that is refused at once with
/// `org.freedesktop.DBus.Error.LimitsExceeded` and counted (``callCounters``). Refusing, not pausing the socket:
/// the connection must keep reading the replies its running handlers await. Handlers should not block, and long
/// work should hop to an actor or task of its own.
public final class ObjectServer: Sendable {
    /// Decides from the caller's unique name whether it may call an object at all (every interface, including the
    /// standard ones); refused callers get `AccessDenied`.
    public typealias Authorizer = @Sendable (_ sender: String) -> Bool

    struct InterfaceEntry {
        let definition: ExportedInterface
        var values: [String: DBusValue]
    }

    struct ObjectEntry {
        var interfaces: [InterfaceEntry] = []
        var authorize: Authorizer?
        var isManager = false

        func index(of interface: String) -> Int? { interfaces.firstIndex { $0.definition.name == interface } }
    }

    struct State {
        var objects: [ObjectPath: ObjectEntry] = [:]
        var style = Style.standard
    }

    let state = Mutex(State())
    let mailbox: Mailbox
    private let incoming: AsyncStream<DBusMessage>
    private let incomingContinuation: AsyncStream<DBusMessage>.Continuation
    private let admission = CallAdmission(limits: Limits())

    init(mailbox: Mailbox) {
        self.mailbox = mailbox
        (incoming, incomingContinuation) = AsyncStream.makeStream(of: DBusMessage.self)
    }

    /// The bounds on calls served at once; ``Limits/init(maxCallsInFlight:maxQueuedCalls:)``'s defaults unless
    /// changed.
    public var limits: Limits {
        get { admission.limits }
        set { admission.limits = newValue }
    }

    /// The calls running, waiting and refused so far.
    public var callCounters: CallCounters { admission.counters }

    /// How calls are matched and refused and what introspection lists; ``Style/standard`` unless changed.
    /// Set it before exporting objects: `connection.objects.style = .bluez`.
    public var style: Style {
        get { state.withLock { $0.style } }
        set { state.withLock { $0.style = newValue } }
    }

    // MARK: Exporting

    /// Exports an object at `path` with `interfaces`; the nearest manager above it announces it with
    /// `InterfacesAdded`.
    /// - Throws: ``DBusError/Name/objectPathInUse`` if an object with interfaces is already there.
    public func export(_ path: ObjectPath, interfaces: [ExportedInterface], authorize: Authorizer? = nil) throws {
        try state.withLock { (state) throws(DBusError) in
            var entry = state.objects[path] ?? ObjectEntry()
            guard entry.interfaces.isEmpty else { throw DBusError(.objectPathInUse, "\(path) is already exported") }
            entry.interfaces = interfaces.map { InterfaceEntry(definition: $0, values: $0.initialValues) }
            if let authorize { entry.authorize = authorize }
            state.objects[path] = entry
            emitInterfacesAdded(path, Announcement.added(entry.interfaces, to: [], style: state.style), in: state)
        }
    }

    /// Removes the object at `path` (and its object manager, if it was one); the nearest manager above it
    /// announces `InterfacesRemoved`.
    public func unexport(_ path: ObjectPath) throws {
        try state.withLock { (state) throws(DBusError) in
            guard let entry = state.objects.removeValue(forKey: path) else {
                throw DBusError(.unknownObject, "no object at \(path)")
            }
            emitInterfacesRemoved(
                path, Announcement.removed(entry.interfaces, leaving: [], style: state.style), in: state)
        }
    }

    /// Adds an interface to the object at `path` (creating the object if needed) and announces it.
    public func addInterface(_ interface: ExportedInterface, at path: ObjectPath) throws {
        try state.withLock { (state) throws(DBusError) in
            var entry = state.objects[path] ?? ObjectEntry()
            guard entry.index(of: interface.name) == nil else {
                throw DBusError(.objectPathInUse, "\(path) already has \(interface.name)")
            }
            let added = InterfaceEntry(definition: interface, values: interface.initialValues)
            let before = entry.interfaces
            entry.interfaces.append(added)
            state.objects[path] = entry
            emitInterfacesAdded(path, Announcement.added([added], to: before, style: state.style), in: state)
        }
    }

    /// Removes an interface from the object at `path` and announces it.
    public func removeInterface(_ name: String, at path: ObjectPath) throws {
        try state.withLock { (state) throws(DBusError) in
            guard var entry = state.objects[path], let index = entry.index(of: name) else {
                throw DBusError(.unknownInterface, "\(path) has no interface \(name)")
            }
            let removed = entry.interfaces.remove(at: index)
            state.objects[path] = entry
            emitInterfacesRemoved(
                path, Announcement.removed([removed], leaving: entry.interfaces, style: state.style), in: state)
        }
    }

    /// Makes `path` an `org.freedesktop.DBus.ObjectManager` for every object below it.
    public func addObjectManager(at path: ObjectPath, authorize: Authorizer? = nil) {
        state.withLock { state in
            var entry = state.objects[path] ?? ObjectEntry()
            entry.isManager = true
            if let authorize { entry.authorize = authorize }
            state.objects[path] = entry
        }
    }

    /// The exported paths, sorted.
    public var paths: [ObjectPath] { state.withLock { $0.objects.keys.sorted() } }

    // MARK: Properties

    /// The current value of a property (`nil` if absent or unknown).
    public func property(_ name: String, interface: String, at path: ObjectPath) -> DBusValue? {
        state.withLock { state in
            guard let entry = state.objects[path], let index = entry.index(of: interface) else { return nil }
            return entry.interfaces[index].values[name]
        }
    }

    /// Sets a property (or makes it absent with `nil`) and emits `PropertiesChanged` as its ``ExportedProperty/ChangeSignal``
    /// says; emitted on every call, even when the value is unchanged (a GATT notification may repeat a value).
    /// Called while a method handler or setter of this server runs, the signal leaves after that call's reply.
    public func setProperty(_ name: String, to value: DBusValue?, interface: String, at path: ObjectPath) throws {
        try setProperties([(name, value)], interface: interface, at: path)
    }

    /// Sets several properties of one interface and emits one `PropertiesChanged` for all of them.
    /// - Throws: ``DBusError`` (`UnknownObject`, `UnknownInterface`, `UnknownProperty`) or
    ///   ``DBusMarshalError/typeMismatch(expected:actual:)`` for a value of the wrong type; nothing changes then.
    public func setProperties(
        _ changes: [(name: String, value: DBusValue?)], interface: String, at path: ObjectPath
    ) throws {
        try setProperties(changes, interface: interface, at: path, emitting: true)
    }

    /// ``setProperties(_:interface:at:)``, emitting `PropertiesChanged` only when `emitting`: without
    /// it Get, GetAll and GetManagedObjects show the values and no client is told, as a service that
    /// changes state without signalling it (blesim reproduces one of bluetoothd's).
    public func setProperties(
        _ changes: [(name: String, value: DBusValue?)], interface: String, at path: ObjectPath, emitting: Bool
    )
        throws
    {
        try setProperties(changes, interface: interface, at: path, announce: emitting ? .afterCall : .never)
    }

    /// ``setProperties(_:interface:at:)`` whose `PropertiesChanged` leaves at once, carrying these values, even
    /// while a call of this server is being handled (that call's other signals still follow its reply). For a
    /// property whose every change is an event, as bluetoothd sends a characteristic's `Value`
    /// (`G_DBUS_PROPERTY_CHANGED_FLAG_FLUSH`): each notification is a signal of its own, in the order they came.
    /// Held back, two would fold into one with the later value, and leave after signals sent meanwhile.
    public func setPropertiesNow(
        _ changes: [(name: String, value: DBusValue?)], interface: String, at path: ObjectPath
    ) throws {
        try setProperties(changes, interface: interface, at: path, announce: .now)
    }

    /// When a change of properties is announced.
    private enum SignalTiming { case never, afterCall, now }

    private func setProperties(
        _ changes: [(name: String, value: DBusValue?)], interface: String, at path: ObjectPath,
        announce: SignalTiming
    ) throws {
        try state.withLock { (state) throws in
            guard var entry = state.objects[path] else { throw DBusError(.unknownObject, "no object at \(path)") }
            guard let index = entry.index(of: interface) else {
                throw DBusError(.unknownInterface, "\(path) has no interface \(interface)")
            }
            let definition = entry.interfaces[index].definition
            var properties: [ExportedProperty] = []
            for change in changes {
                guard let property = definition.property(change.name) else {
                    throw DBusError(.unknownProperty, "\(interface) has no property \(change.name)")
                }
                if let value = change.value, value.type != property.type {
                    throw DBusMarshalError.typeMismatch(expected: property.type.signature, actual: value.signature)
                }
                properties.append(property)
            }
            for change in changes { entry.interfaces[index].values[change.name] = change.value }
            state.objects[path] = entry
            guard announce != .never else { return }
            var names: [String] = []
            for property in properties where !names.contains(property.name) { names.append(property.name) }
            let item = CallContext.Deferred.propertiesChanged(path: path, interface: interface, names: names)
            if announce == .now { sendNow(item, in: state) } else { emit(item, in: state) }
        }
    }

    // MARK: Emission (called with the lock held, so signals leave in the order of the changes)

    /// Sends `item`, or holds it back if the current task handles a call of this server (see ``CallContext``).
    func emit(_ item: CallContext.Deferred, in state: State) {
        if let context = CallContext.current, context.server == ObjectIdentifier(self), context.hold(item) { return }
        sendNow(item, in: state)
    }

    /// Sends held-back signals, in order.
    func send(_ items: [CallContext.Deferred]) {
        guard !items.isEmpty else { return }
        state.withLock { state in
            for item in items { sendNow(item, in: state) }
        }
    }

    private func sendNow(_ item: CallContext.Deferred, in state: State) {
        switch item {
        case .message(let message):
            post(message)
        case .propertiesChanged(let path, let interface, let names):
            guard let entry = state.objects[path], let index = entry.index(of: interface) else { return }
            let current = entry.interfaces[index]
            let changes = names.compactMap { name in
                current.definition.property(name).map { ($0, current.values[name]) }
            }
            post(ObjectServer.propertiesChanged(path, interface, changes))
        }
    }

    static func propertiesChanged(
        _ path: ObjectPath, _ interface: String, _ changes: [(ExportedProperty, DBusValue?)]
    ) -> DBusMessage? {
        var changed: [(key: DBusValue, value: DBusValue)] = []
        var invalidated: [DBusValue] = []
        for (property, value) in changes {
            switch property.changeSignal {
            case .emitsValue:
                if let value {
                    changed.append((.string(property.name), .variant(value)))
                } else {
                    invalidated.append(.string(property.name))
                }
            case .invalidates: invalidated.append(.string(property.name))
            case .constant, .none: break
            }
        }
        guard !changed.isEmpty || !invalidated.isEmpty else { return nil }
        return try? DBusMessage.signal(
            path: path, interface: StandardInterfaces.properties, member: "PropertiesChanged",
            arguments: [
                .string(interface), .dictionary(key: .string, value: .variant, changed), .array(.string, invalidated),
            ])
    }

    private func emitInterfacesAdded(_ path: ObjectPath, _ interfaces: [Announcement.Entry], in state: State) {
        guard !interfaces.isEmpty, let manager = ObjectServer.manager(above: path, in: state),
            let signal = try? DBusMessage.signal(
                path: manager, interface: StandardInterfaces.objectManager, member: "InterfacesAdded",
                arguments: [.objectPath(path), Announcement.dictionary(interfaces)])
        else { return }
        emit(.message(signal), in: state)
    }

    private func emitInterfacesRemoved(_ path: ObjectPath, _ names: [String], in state: State) {
        guard !names.isEmpty, let manager = ObjectServer.manager(above: path, in: state),
            let signal = try? DBusMessage.signal(
                path: manager, interface: StandardInterfaces.objectManager, member: "InterfacesRemoved",
                arguments: [.objectPath(path), .array(.string, names.map(DBusValue.string))])
        else { return }
        emit(.message(signal), in: state)
    }

    func post(_ message: DBusMessage?) {
        if let message { _ = mailbox.post(.send(message)) }
    }

    /// The nearest object manager strictly above `path`: the one that announces it (a manager's own
    /// `GetManagedObjects` still lists everything below it, managers in between included).
    static func manager(above path: ObjectPath, in state: State) -> ObjectPath? {
        var current = path.parent
        while let ancestor = current {
            if state.objects[ancestor]?.isManager == true { return ancestor }
            current = ancestor.parent
        }
        return nil
    }
    /// `a{sv}`: the readable, present properties of an interface, in declaration order.
    static func readableProperties(_ entry: InterfaceEntry) -> DBusValue {
        var entries: [(key: DBusValue, value: DBusValue)] = []
        for property in entry.definition.properties where property.isReadable {
            if let value = entry.values[property.name] { entries.append((.string(property.name), .variant(value))) }
        }
        return .dictionary(key: .string, value: .variant, entries)
    }

    // MARK: Serving calls

    /// Queues an incoming method call (owner thread), or refuses it when the queue is full.
    func receive(_ message: DBusMessage) {
        guard admission.admit() else {
            if !message.noReplyExpected {
                let counters = admission.counters
                let limits = admission.limits
                post(
                    try? message.makeErrorReply(
                        DBusError(
                            .limitsExceeded,
                            "too many calls on this connection (\(counters.inFlight) running, \(limits.maxQueuedCalls) waiting); try again"
                        )))
            }
            return
        }
        incomingContinuation.yield(message)
    }

    /// Ends call processing (owner thread, at teardown).
    func connectionClosed() { incomingContinuation.finish() }

    /// Starts the task that hands incoming calls to handlers in arrival order.
    func startServing(_ connection: DBusConnection) {
        let incoming = self.incoming
        let admission = self.admission
        Task { [self] in
            for await message in incoming {
                await admission.acquire()
                Task.immediate {
                    await self.serve(message, on: connection)
                    admission.release()
                }
            }
        }
    }

    private func serve(_ message: DBusMessage, on connection: DBusConnection) async {
        let context = CallContext(server: self)
        let call = DBusMethodCall(message: message, connection: connection, context: context)
        let reply: DBusMessage?
        do {
            let values = try await CallContext.$current.withValue(context) { try await dispatch(call) }
            reply = try message.makeReply(values)
        } catch {
            reply = try? message.makeErrorReply(ObjectServer.replyError(for: error))
        }
        // One lock for the reply and the held-back signals: nothing emitted elsewhere can come between them.
        state.withLock { state in
            if !message.noReplyExpected { post(reply) }
            for item in context.take(close: true) { sendNow(item, in: state) }
        }
        for work in context.takeAfterReply() { await work() }
    }

    static func replyError(for error: any Error) -> DBusError {
        switch error {
        case let error as DBusError: error
        case let error as DBusMarshalError: DBusError(.invalidArgs, error.description)
        case is CancellationError: DBusError(.failed, "the handler was cancelled")
        default: DBusError(.failed, String(describing: error))
        }
    }
}

extension ExportedInterface {
    var initialValues: [String: DBusValue] {
        var values: [String: DBusValue] = [:]
        for property in properties { if let value = property.initialValue { values[property.name] = value } }
        return values
    }
}
