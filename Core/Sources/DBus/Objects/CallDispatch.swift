/// The names of the standard interfaces the object server answers.
enum StandardInterfaces {
    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let peer = "org.freedesktop.DBus.Peer"
}

extension ObjectServer {
    /// Where a call goes once its object and interface are known.
    enum Route {
        /// Answered from the tree: the reply's arguments.
        case values([DBusValue])
        /// A user method: run its handler.
        case method(ExportedMethod)
        /// A remote `Set` that passed the checks: run the setter, then store.
        case set(interface: String, property: ExportedProperty, value: DBusValue)
    }

    /// Runs one call to completion and returns the reply's arguments (or throws the error to reply with).
    func dispatch(_ call: DBusMethodCall) async throws -> [DBusValue] {
        let route = try state.withLock { (state) throws in try ObjectServer.route(call, in: state) }
        switch route {
        case .values(let values):
            return values
        case .method(let method):
            let signature = call.message.signature.rawValue
            guard signature == method.inputSignature else {
                throw DBusError(
                    .invalidArgs, "\(method.name) takes \"\(method.inputSignature)\", got \"\(signature)\"")
            }
            let values = try await method.handler(call)
            var returned = ""
            for value in values { value.type.appendSignature(to: &returned) }
            guard returned == method.outputSignature else {
                throw DBusError(
                    .failed, "\(method.name) returned \"\(returned)\" but declares \"\(method.outputSignature)\"")
            }
            return values
        case .set(let interface, let property, let requested):
            var stored: DBusValue? = requested
            if let update = property.update {
                stored = try await update(requested, call)
            } else if let setter = property.setter {
                try await setter(requested, call)
            }
            guard let stored else { return [] }
            guard stored.type == property.type else {
                throw DBusError(
                    .failed,
                    "the setter of \(property.name) chose type \"\(stored.signature)\" for \"\(property.type)\"")
            }
            state.withLock { state in
                guard var entry = state.objects[call.path], let index = entry.index(of: interface) else { return }
                let previous = entry.interfaces[index].values[property.name]
                entry.interfaces[index].values[property.name] = stored
                state.objects[call.path] = entry
                guard previous != stored else { return }
                emit(.propertiesChanged(path: call.path, interface: interface, names: [property.name]), in: state)
            }
            return []
        }
    }

    static func route(_ call: DBusMethodCall, in state: State) throws -> Route {
        let path = call.path
        let member = call.member
        let interface = call.interface
        let gdbus = state.style.dispatch == .gdbus
        guard let object = state.objects[path] else {
            if member == "Introspect", interface == StandardInterfaces.introspectable || (interface == nil && !gdbus),
                state.objects.keys.contains(where: { path.isStrictAncestor(of: $0) })
            {
                return .values([.string(Introspection.xml(for: path, object: nil, in: state))])
            }
            if gdbus { throw libdbusUnhandled(call, .unknownObject) }
            throw DBusError(.unknownObject, "no object at \(path)")
        }
        if let authorize = object.authorize, !authorize(call.sender) {
            throw DBusError(.accessDenied, "\(call.sender) may not call \(path)")
        }
        if gdbus { return try gdbusRoute(call, object: object, in: state) }
        switch interface {
        case StandardInterfaces.properties?:
            return try propertiesRoute(call, object: object, style: state.style)
        case StandardInterfaces.introspectable?:
            guard member == "Introspect" else { throw unknownMethod(call) }
            return .values([.string(Introspection.xml(for: path, object: object, in: state))])
        case StandardInterfaces.objectManager? where object.isManager:
            guard member == "GetManagedObjects" else { throw unknownMethod(call) }
            return .values([managedObjects(below: path, in: state)])
        case StandardInterfaces.peer?:
            guard member == "Ping" else { throw unknownMethod(call) }
            return .values([])
        case let name?:
            guard let index = object.index(of: name) else {
                throw DBusError(.unknownInterface, "\(path) has no interface \(name)")
            }
            guard let method = object.interfaces[index].definition.method(member) else { throw unknownMethod(call) }
            return .method(method)
        case nil:
            for entry in object.interfaces {
                if let method = entry.definition.method(member) { return .method(method) }
            }
            switch member {
            case "Get", "GetAll", "Set": return try propertiesRoute(call, object: object, style: state.style)
            case "Introspect": return .values([.string(Introspection.xml(for: path, object: object, in: state))])
            case "GetManagedObjects" where object.isManager: return .values([managedObjects(below: path, in: state)])
            default: throw unknownMethod(call)
            }
        }
    }

    /// Routing as BlueZ's gdbus on libdbus does it: a call must name an interface the object has and match one of
    /// its methods by name and signature; anything else gets libdbus's reply for an unhandled call.
    private static func gdbusRoute(_ call: DBusMethodCall, object: ObjectEntry, in state: State) throws -> Route {
        let signature = call.message.signature.rawValue
        let unhandled = libdbusUnhandled(call, .unknownMethod)
        switch call.interface {
        case StandardInterfaces.properties? where object.interfaces.contains { !$0.definition.properties.isEmpty }:
            let expected = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
            guard expected[call.member] == signature else { throw unhandled }
            return try propertiesRoute(call, object: object, style: state.style)
        case StandardInterfaces.introspectable?:
            guard call.member == "Introspect", signature.isEmpty else { throw unhandled }
            return .values([.string(Introspection.xml(for: call.path, object: object, in: state))])
        case StandardInterfaces.objectManager? where object.isManager:
            guard call.member == "GetManagedObjects", signature.isEmpty else { throw unhandled }
            return .values([managedObjects(below: call.path, in: state)])
        case let name?:
            guard let index = object.index(of: name),
                let method = object.interfaces[index].definition.method(call.member),
                method.inputSignature == signature
            else { throw unhandled }
            return .method(method)
        case nil:
            throw unhandled
        }
    }

    /// libdbus's reply to a call no handler took (`UnknownMethod`, or `UnknownObject` where no object is), with its
    /// wording: `Method "M" with signature "S" on interface "I" doesn't exist` and a newline.
    static func libdbusUnhandled(_ call: DBusMethodCall, _ name: DBusError.Name) -> DBusError {
        DBusError(
            name,
            "Method \"\(call.member)\" with signature \"\(call.message.signature)\" on interface "
                + "\"\(call.interface ?? "(null)")\" doesn't exist\n")
    }

    private static func unknownMethod(_ call: DBusMethodCall) -> DBusError {
        DBusError(
            .unknownMethod,
            "no method \(call.member) in \(call.interface ?? "any interface") at \(call.path) "
                + "(signature \"\(call.message.signature)\")")
    }

    /// `a{oa{sa{sv}}}` of every object strictly below `path`, in path order.
    static func managedObjects(below path: ObjectPath, in state: State) -> DBusValue {
        let entries = state.objects.filter { path.isStrictAncestor(of: $0.key) && !$0.value.interfaces.isEmpty }
            .sorted { $0.key < $1.key }
            .map {
                (key: DBusValue.objectPath($0.key), value: Announcement.listed($0.value.interfaces, style: state.style))
            }
        return .dictionary(
            key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
            entries)
    }
}
