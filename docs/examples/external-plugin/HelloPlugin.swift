// A role plugin written outside the bleagent repository, built against the
// installed core (docs/plugins.md). It serves both roles and adds one control
// method, hello.greet, which answers {"greeting": "hello, NAME", "role": ROLE}.
import JSON
import RoleKit

final class HelloPlugin: RolePlugin {
    private let context: RoleContext
    private let greeting: String

    init(context: RoleContext) throws(PluginConfigError) {
        self.context = context
        switch context.config["greeting"] {
        case nil: greeting = "hello"
        case .string(let text)?: greeting = text
        case _?: throw PluginConfigError(path: "greeting", "expected a string")
        }
    }

    func start() async throws {
        let greeting = self.greeting
        let role = context.role
        try context.methods.register("hello.greet") { call in
            guard let name = call.params?["name"]?.stringValue else {
                throw PluginMethodError.invalidParams("name: expected a string")
            }
            return ["greeting": .string("\(greeting), \(name)"), "role": .string(role.rawValue)]
        }
    }

    func stop() async {}
}

/// The ABI version this plugin was compiled against.
@c(bleagent_plugin_abi_version)
public func helloABIVersion() -> UInt32 { PluginABI.version }

/// The plugin's descriptor, retained once for the agent.
@c(bleagent_plugin_descriptor)
public func helloDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(name: "HelloPlugin", namespace: "hello", roles: [.central, .peripheral]) { context in
        try HelloPlugin(context: context)
    }.exported()
}
