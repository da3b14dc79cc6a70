/// `org.freedesktop.DBus.Properties` on exported objects: `Get`, `GetAll` and `Set`, checked against the
/// interface descriptions (access, presence, exact type), with errors worded as the server's ``ObjectServer/Style``
/// says (gdbus: the names and texts of BlueZ's `gdbus/object.c`).
extension ObjectServer {
    static func propertiesRoute(_ call: DBusMethodCall, object: ObjectEntry, style: Style) throws -> Route {
        let errors = PropertyErrors(gdbus: style.dispatch == .gdbus, path: call.path)
        switch call.member {
        case "Get":
            let (interface, name) = try call.decode(String.self, String.self)
            guard let index = object.index(of: interface) else { throw errors.noInterface(interface) }
            let entry = object.interfaces[index]
            guard let property = entry.definition.property(name) else { throw errors.noProperty(interface, name) }
            guard let value = entry.values[name] else { throw errors.absent(interface, name) }
            guard property.isReadable else { throw errors.writeOnly(interface, name) }
            return .values([.variant(value)])
        case "GetAll":
            let (interface) = try call.decode(String.self)
            guard let index = object.index(of: interface) else { throw errors.noInterface(interface) }
            return .values([readableProperties(object.interfaces[index])])
        case "Set":
            let (interface, name, value) = try call.decode(String.self, String.self, DBusValue.self)
            guard let index = object.index(of: interface) else { throw errors.noInterface(interface) }
            let entry = object.interfaces[index]
            guard let property = entry.definition.property(name) else { throw errors.noPropertyToSet(interface, name) }
            guard property.isWritable else { throw errors.readOnly(interface, name) }
            if errors.gdbus, entry.values[name] == nil { throw errors.noPropertyToSet(interface, name) }
            guard value.type == property.type else { throw errors.wrongType(interface, property, value) }
            return .set(interface: interface, property: property, value: value)
        default:
            throw DBusError(.unknownMethod, "no method \(call.member) in \(StandardInterfaces.properties)")
        }
    }
}

/// The errors of `org.freedesktop.DBus.Properties`, in our words or gdbus's.
struct PropertyErrors {
    let gdbus: Bool
    let path: ObjectPath

    func noInterface(_ interface: String) -> DBusError {
        gdbus
            ? DBusError(.invalidArgs, "No such interface '\(interface)'")
            : DBusError(.unknownInterface, "\(path) has no interface \(interface)")
    }

    func noProperty(_ interface: String, _ name: String) -> DBusError {
        gdbus
            ? DBusError(.invalidArgs, "No such property '\(name)'")
            : DBusError(.unknownProperty, "\(interface) has no property \(name)")
    }

    func noPropertyToSet(_ interface: String, _ name: String) -> DBusError {
        gdbus
            ? DBusError(.unknownProperty, "No such property '\(name)'")
            : DBusError(.unknownProperty, "\(interface) has no property \(name)")
    }

    func absent(_ interface: String, _ name: String) -> DBusError {
        gdbus
            ? DBusError(.invalidArgs, "No such property '\(name)'")
            : DBusError(.unknownProperty, "\(interface).\(name) has no value")
    }

    func writeOnly(_ interface: String, _ name: String) -> DBusError {
        gdbus
            ? DBusError(.invalidArgs, "Property '\(name)' is not readable")
            : DBusError(.accessDenied, "\(interface).\(name) is write-only")
    }

    func readOnly(_ interface: String, _ name: String) -> DBusError {
        gdbus
            ? DBusError(.propertyReadOnly, "Property '\(name)' is not writable")
            : DBusError(.propertyReadOnly, "\(interface).\(name) is read-only")
    }

    func wrongType(_ interface: String, _ property: ExportedProperty, _ value: DBusValue) -> DBusError {
        gdbus
            ? DBusError(.invalidSignature, "Invalid signature for '\(property.name)'")
            : DBusError(
                .invalidArgs, "\(interface).\(property.name) has type \"\(property.type)\", got \"\(value.signature)\"")
    }
}
