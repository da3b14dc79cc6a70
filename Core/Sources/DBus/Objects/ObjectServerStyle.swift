extension ObjectServer {
    /// How an ``ObjectServer`` matches and refuses calls and what its introspection data lists.
    ///
    /// ``standard`` is ours: descriptive error messages, calls without an interface matched by member name,
    /// `org.freedesktop.DBus.Peer` listed. ``bluez`` answers as BlueZ's bluetoothd does (its `gdbus` library on
    /// libdbus), so a simulator cannot be told from it: `connection.objects.style = .bluez`.
    public struct Style: Sendable, Hashable {
        /// How calls are matched and refused.
        public enum Dispatch: Sendable, Hashable {
            /// Ours: a call without an interface goes to the first interface with that method; errors name what
            /// was wrong (`UnknownInterface`, `InvalidArgs` for a wrong signature, ...).
            case descriptive
            /// As gdbus: a call must name an interface the object has and match a method's name and signature, or
            /// it gets libdbus's `UnknownMethod` (`UnknownObject` at a path with no object) with libdbus's text
            /// `Method "M" with signature "S" on interface "I" doesn't exist\n`; `org.freedesktop.DBus.Properties`
            /// exists only on objects with properties; its errors are gdbus's: `Get` of an unknown property
            /// `InvalidArgs "No such property 'X'"`, `Set` of one `UnknownProperty`, of a read-only one
            /// `PropertyReadOnly "Property 'X' is not writable"`, with a wrong type
            /// `InvalidSignature "Invalid signature for 'X'"`, an unknown interface `InvalidArgs
            /// "No such interface 'I'"`.
            case gdbus
        }

        /// How calls are matched and refused.
        public var dispatch: Dispatch
        /// Whether introspection lists `org.freedesktop.DBus.Peer` (answered by libdbus either way; gdbus does
        /// not list it).
        public var introspectsPeer: Bool
        /// Whether `GetManagedObjects`, `InterfacesAdded` and `InterfacesRemoved` list the standard interfaces with
        /// an object's own, as gdbus does: `org.freedesktop.DBus.Introspectable` on every object and
        /// `org.freedesktop.DBus.Properties` on one with properties, each with no properties.
        public var announcesStandardInterfaces: Bool

        /// A style; the defaults are ``standard``.
        public init(
            dispatch: Dispatch = .descriptive, introspectsPeer: Bool = true, announcesStandardInterfaces: Bool = false
        ) {
            self.dispatch = dispatch
            self.introspectsPeer = introspectsPeer
            self.announcesStandardInterfaces = announcesStandardInterfaces
        }

        /// Ours: descriptive errors, `Peer` listed.
        public static let standard = Style()
        /// bluetoothd's: gdbus dispatch and errors, `Peer` not listed, `Properties` listed only on objects with
        /// properties, the standard interfaces announced with an object's own.
        public static let bluez = Style(dispatch: .gdbus, introspectsPeer: false, announcesStandardInterfaces: true)
    }
}
