/// Generates `org.freedesktop.DBus.Introspectable` XML from the exported interface descriptions.
enum Introspection {
    static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    static let peer = """
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>

        """

    static let introspectable = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>

        """

    static let properties = """
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>

        """

    static let objectManager = """
          <interface name="org.freedesktop.DBus.ObjectManager">
            <method name="GetManagedObjects">
              <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
            </method>
            <signal name="InterfacesAdded">
              <arg name="object" type="o"/>
              <arg name="interfaces" type="a{sa{sv}}"/>
            </signal>
            <signal name="InterfacesRemoved">
              <arg name="object" type="o"/>
              <arg name="interfaces" type="as"/>
            </signal>
          </interface>

        """

    /// The XML for `path`: its interfaces (standard ones included) and its child nodes.
    static func xml(for path: ObjectPath, object: ObjectServer.ObjectEntry?, in state: ObjectServer.State) -> String {
        var xml = header + "<node>\n"
        if state.style.introspectsPeer { xml += peer }
        xml += introspectable
        if let object {
            let listsProperties =
                state.style.dispatch == .gdbus
                ? object.interfaces.contains { !$0.definition.properties.isEmpty } : !object.interfaces.isEmpty
            if listsProperties { xml += properties }
            if object.isManager { xml += objectManager }
            for entry in object.interfaces { xml += render(entry.definition) }
        }
        var children = Set<Substring>()
        for other in state.objects.keys {
            if let child = path.childElement(toward: other) { children.insert(child) }
        }
        for child in children.sorted() { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    static func render(_ interface: ExportedInterface) -> String {
        var xml = "  <interface name=\"\(escape(interface.name))\">\n"
        for method in interface.methods {
            let arguments =
                method.inputs.map { argument($0, direction: "in") }
                + method.outputs.map { argument($0, direction: "out") }
            xml += element("method", name: method.name, children: arguments)
        }
        for signal in interface.signals {
            xml += element("signal", name: signal.name, children: signal.arguments.map { argument($0, direction: nil) })
        }
        for property in interface.properties {
            let open =
                "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.type.signature))\" "
                + "access=\"\(property.access.rawValue)\""
            if property.changeSignal == .emitsValue {
                xml += open + "/>\n"
            } else {
                xml += open + ">\n"
                xml +=
                    "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" "
                    + "value=\"\(property.changeSignal.rawValue)\"/>\n"
                xml += "    </property>\n"
            }
        }
        return xml + "  </interface>\n"
    }

    private static func element(_ kind: String, name: String, children: [String]) -> String {
        if children.isEmpty { return "    <\(kind) name=\"\(escape(name))\"/>\n" }
        return "    <\(kind) name=\"\(escape(name))\">\n" + children.joined() + "    </\(kind)>\n"
    }

    private static func argument(_ argument: DBusArgument, direction: String?) -> String {
        var xml = "      <arg"
        if let name = argument.name { xml += " name=\"\(escape(name))\"" }
        xml += " type=\"\(escape(argument.type.signature))\""
        if let direction { xml += " direction=\"\(direction)\"" }
        return xml + "/>\n"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
