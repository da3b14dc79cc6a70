import ControlProtocol
import JSON

/// Reads the params of `events.subscribe`: `{"kinds": ["state", ...]}`,
/// absent or `{}` meaning every kind.
enum EventFilter {
    static func kinds(from params: JSON?) -> Result<Set<EventKind>, RPCError> {
        guard let params else { return .success(Set(EventKind.allCases)) }
        guard case .object(let object) = params else {
            return .failure(.invalidParams("params must be an object: {\"kinds\": [...]}"))
        }
        for key in object.keys where key != "kinds" {
            return .failure(.invalidParams("unknown parameter \"\(key)\""))
        }
        guard let raw = object["kinds"] else { return .success(Set(EventKind.allCases)) }
        guard let array = raw.arrayValue, !array.isEmpty else {
            return .failure(.invalidParams("\"kinds\" must be a non-empty array of event kinds"))
        }
        var kinds: Set<EventKind> = []
        for element in array {
            guard let name = element.stringValue, let kind = EventKind(rawValue: name) else {
                let known = EventKind.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(.invalidParams("\(element.serialized()) is not an event kind (\(known))"))
            }
            kinds.insert(kind)
        }
        return .success(kinds)
    }
}
