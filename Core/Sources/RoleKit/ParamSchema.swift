import JSON

/// The params a control method accepts, declared when the method is
/// registered (built-in or plugin, docs/plugins.md "Control methods"). The
/// agent checks every call against it **before the handler runs**: a call
/// that does not match is answered -32602 with each problem's field path,
/// and the handler never sees it, so a refused request changes nothing.
///
/// ```swift
/// try context.methods.register(
///     "hello.greet",
///     params: .object(.required("name", .string(maxBytes: 64)), .optional("times", .integer(1...10)))
/// ) { call in
///     let times = call.arguments.int("times") ?? 1
///     return .string(String(repeating: "hello \(call.arguments.string("name") ?? "") ", count: Int(times)))
/// }
/// ```
///
/// Named params only (a JSON object); an unknown param is refused, so a
/// typo never falls back to a default.
public struct ParamSchema: Sendable {
    enum Shape: Sendable {
        case none
        case any
        case object([ParamField], [ParamRule])
    }

    let shape: Shape

    /// No params: absent, `{}` or `[]`.
    public static let none = ParamSchema(shape: .none)

    /// Anything at all, handed over unchecked (an echo method, a pass-through).
    public static let any = ParamSchema(shape: .any)

    /// An object with `fields` (each once, no others) satisfying `rules`.
    public static func object(_ fields: ParamField..., rules: [ParamRule] = []) -> ParamSchema {
        object(fields, rules: rules)
    }

    /// An object with `fields` (each once, no others) satisfying `rules`.
    public static func object(_ fields: [ParamField], rules: [ParamRule] = []) -> ParamSchema {
        ParamSchema(shape: .object(fields, rules))
    }

    /// The declared fields (empty for ``none`` and ``any``).
    public var fields: [ParamField] {
        if case .object(let fields, _) = shape { fields } else { [] }
    }

    /// Checks `params` (as the request carried them: an object, an array or
    /// absent) and returns them for the handler, or every problem.
    public func validate(_ params: JSON?) throws(JSONFieldErrors) -> ParamValues {
        switch shape {
        case .any:
            return ParamValues(params)
        case .none:
            try Self.expectEmpty(params)
            return ParamValues(params)
        case .object(let fields, let rules):
            let object = try Self.namedParams(params)
            var errors: [JSONFieldError] = []
            let known = Set(fields.map(\.name))
            for key in object.keys where !known.contains(key) {
                errors.append(JSONFieldError(path: key, "unknown param"))
            }
            for field in fields {
                guard let value = object[field.name] else {
                    if field.isRequired { errors.append(JSONFieldError(path: field.name, "missing required param")) }
                    continue
                }
                errors += field.type.problems(value, field.name)
            }
            if errors.isEmpty { errors += rules.compactMap { $0.check(object) } }
            guard errors.isEmpty else { throw JSONFieldErrors(errors) }
            return ParamValues(params)
        }
    }

    private static func expectEmpty(_ params: JSON?) throws(JSONFieldErrors) {
        switch params {
        case nil: return
        case .object(let object)?:
            guard !object.isEmpty else { return }
            throw JSONFieldErrors(
                object.keys.map { JSONFieldError(path: $0, "unknown param (this method takes none)") })
        case .array(let array)? where array.isEmpty: return
        case let other?:
            throw JSONFieldErrors([
                JSONFieldError(path: "", "this method takes no params, found \(JSONFieldError.describe(other))")
            ])
        }
    }

    private static func namedParams(_ params: JSON?) throws(JSONFieldErrors) -> JSONObject {
        switch params {
        case nil: return JSONObject()
        case .object(let object)?: return object
        case .array(let array)? where array.isEmpty: return JSONObject()
        case let other?:
            throw JSONFieldErrors([
                JSONFieldError(path: "", "expected an object of named params, found \(JSONFieldError.describe(other))")
            ])
        }
    }
}

/// One named param of a ``ParamSchema``.
public struct ParamField: Sendable {
    /// The param's name.
    public let name: String
    /// What its value must be.
    public let type: ParamType
    /// Whether a call must give it.
    public let isRequired: Bool

    /// A param every call must give.
    public static func required(_ name: String, _ type: ParamType) -> ParamField {
        ParamField(name: name, type: type, isRequired: true)
    }

    /// A param a call may leave out.
    public static func optional(_ name: String, _ type: ParamType) -> ParamField {
        ParamField(name: name, type: type, isRequired: false)
    }
}

/// A rule across params: combinations a schema allows or refuses.
public struct ParamRule: Sendable {
    let check: @Sendable (JSONObject) -> JSONFieldError?

    /// Exactly one of `names` must be given (`value` or `text`); the problem
    /// is reported at the first name.
    public static func exactlyOne(of names: String...) -> ParamRule {
        ParamRule { object in
            let given = names.filter { object[$0] != nil }
            guard given.count != 1 else { return nil }
            let list = names.map { "\"\($0)\"" }.joined(separator: " or ")
            return JSONFieldError(
                path: names[0], given.isEmpty ? "give one of \(list)" : "give only one of \(list), not both")
        }
    }

    /// At most one of `names` may be given; the problem is reported at the first name given.
    public static func atMostOne(of names: String...) -> ParamRule {
        ParamRule { object in
            let given = names.filter { object[$0] != nil }
            guard given.count > 1 else { return nil }
            return JSONFieldError(
                path: given[0], "give at most one of \(names.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
    }

    /// A rule of the method's own: `check` returns the problem, or nil.
    public static func custom(_ check: @escaping @Sendable (JSONObject) -> JSONFieldError?) -> ParamRule {
        ParamRule(check: check)
    }
}
