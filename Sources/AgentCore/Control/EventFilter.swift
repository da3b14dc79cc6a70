import ControlProtocol
import JSON
import RoleKit

/// The params of `events.subscribe` (`{"kinds": ["state", ...]}`, absent or
/// `{}` meaning every kind) and `events.unsubscribe` (none), checked by the
/// same ``ParamSchema`` mechanism as every registered method. The control
/// server answers both itself: they act on the connection.
enum EventFilter {
    /// `events.subscribe`'s params.
    static let subscribeParams = ParamSchema.object(
        .optional("kinds", .array(of: .oneOf(EventKind.allCases.map(\.rawValue)), count: 1...64)))

    /// The kinds `params` subscribe to, or -32602.
    static func kinds(from params: JSON?) -> Result<Set<EventKind>, RPCError> {
        Result { () throws(RPCError) in
            let arguments = try MethodRegistry.check(params, against: subscribeParams)
            guard let names = arguments["kinds"]?.arrayValue else { return Set(EventKind.allCases) }
            return Set(names.compactMap { $0.stringValue.flatMap(EventKind.init(rawValue:)) })
        }
    }

    /// -32602 if `params` are not empty (`events.unsubscribe` takes none).
    static func unsubscribeRefusal(_ params: JSON?) -> RPCError? {
        do {
            _ = try MethodRegistry.check(params, against: .none)
            return nil
        } catch {
            return error
        }
    }
}
