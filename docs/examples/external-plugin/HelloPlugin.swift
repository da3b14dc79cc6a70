// A role plugin written outside the bleagent repository, built against the
// installed core (docs/plugins.md). It serves both roles and adds one control
// method, hello.greet, which answers {"greeting": "hello, NAME", "role": ROLE}.
// Its params and its config are declared, so the agent checks both before
// any of its code runs.
import JSON
import RoleKit

/// The plugin's config: `{"greeting": "hej"}`, every problem reported with its path.
struct HelloConfig {
    var greeting = "hello"

    init(json: JSON) throws(JSONFieldErrors) {
        let report = JSONFieldReport()
        if let root = JSONFieldReader(json, report: report) {
            root.allowOnly(["greeting"])
            greeting = root.string("greeting", maxBytes: 64) ?? greeting
        }
        try report.check()
    }
}

final class HelloPlugin: RolePlugin {
    private let context: RoleContext
    private let config: HelloConfig

    init(context: RoleContext) throws(JSONFieldErrors) {
        self.context = context
        config = try HelloConfig(json: context.config)
    }

    func start() async throws {
        let greeting = config.greeting
        let role = context.role
        try context.methods.register("hello.greet", params: .object(.required("name", .string(maxBytes: 64)))) {
            call in
            let name = call.arguments.string("name") ?? ""
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
    PluginDescriptor(
        name: "HelloPlugin", namespace: "hello", roles: [.central, .peripheral],
        validateConfig: PluginDescriptor.checking(HelloConfig.init(json:))
    ) { context in
        try HelloPlugin(context: context)
    }.exported()
}
