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
        case .set(let interface, let property, let value):
            if let setter = property.setter { try await setter(value, call) }
            state.withLock { state in
                guard var entry = state.objects[call.path], let index = entry.index(of: interface) else { return }
                entry.interfaces[index].values[property.name] = value
                state.objects[call.path] = entry
                emitPropertiesChanged(call.path, interface, [(property, value)])
            }
            return []
        }
    }

    static func route(_ call: DBusMethodCall, in state: State) throws -> Route {
        let path = call.path
        let member = call.member
        let interface = call.interface
        guard let object = state.objects[path] else {
            if member == "Introspect", interface == nil || interface == StandardInterfaces.introspectable,
                state.objects.keys.contains(where: { path.isStrictAncestor(of: $0) })
            {
                return .values([.string(Introspection.xml(for: path, object: nil, in: state))])
            }
            throw DBusError(.unknownObject, "no object at \(path)")
        }
        if let authorize = object.authorize, !authorize(call.sender) {
            throw DBusError(.accessDenied, "\(call.sender) may not call \(path)")
        }
        switch interface {
        case StandardInterfaces.properties?:
            return try propertiesRoute(call, object: object)
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
            case "Get", "GetAll", "Set": return try propertiesRoute(call, object: object)
            case "Introspect": return .values([.string(Introspection.xml(for: path, object: object, in: state))])
            case "GetManagedObjects" where object.isManager: return .values([managedObjects(below: path, in: state)])
            default: throw unknownMethod(call)
            }
        }
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
            .map { (key: DBusValue.objectPath($0.key), value: interfacesAndProperties($0.value.interfaces)) }
        return .dictionary(
            key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
            entries)
    }
}
