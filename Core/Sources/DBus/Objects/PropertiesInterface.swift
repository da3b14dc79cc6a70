/// `org.freedesktop.DBus.Properties` on exported objects: `Get`, `GetAll` and `Set`, checked against the
/// interface descriptions (access, presence, exact type).
extension ObjectServer {
    static func propertiesRoute(_ call: DBusMethodCall, object: ObjectEntry) throws -> Route {
        switch call.member {
        case "Get":
            let (interface, name) = try call.decode(String.self, String.self)
            let (entry, property) = try lookup(interface, name, in: object)
            guard property.isReadable else { throw DBusError(.accessDenied, "\(interface).\(name) is write-only") }
            guard let value = entry.values[name] else {
                throw DBusError(.unknownProperty, "\(interface).\(name) has no value")
            }
            return .values([.variant(value)])
        case "GetAll":
            let (interface) = try call.decode(String.self)
            guard let index = object.index(of: interface) else {
                throw DBusError(.unknownInterface, "\(call.path) has no interface \(interface)")
            }
            return .values([readableProperties(object.interfaces[index])])
        case "Set":
            let (interface, name, value) = try call.decode(String.self, String.self, DBusValue.self)
            let (_, property) = try lookup(interface, name, in: object)
            guard property.isWritable else { throw DBusError(.propertyReadOnly, "\(interface).\(name) is read-only") }
            guard value.type == property.type else {
                throw DBusError(
                    .invalidArgs, "\(interface).\(name) has type \"\(property.type)\", got \"\(value.signature)\"")
            }
            return .set(interface: interface, property: property, value: value)
        default:
            throw DBusError(.unknownMethod, "no method \(call.member) in \(StandardInterfaces.properties)")
        }
    }

    private static func lookup(
        _ interface: String, _ name: String, in object: ObjectEntry
    ) throws(DBusError)
        -> (InterfaceEntry, ExportedProperty)
    {
        guard let index = object.index(of: interface) else {
            throw DBusError(.unknownInterface, "no interface \(interface)")
        }
        let entry = object.interfaces[index]
        guard let property = entry.definition.property(name) else {
            throw DBusError(.unknownProperty, "\(interface) has no property \(name)")
        }
        return (entry, property)
    }
}
