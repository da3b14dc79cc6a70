import ControlProtocol
import JSON

/// One event's notification line, with the event's data serialised once:
/// each client's copy differs only in `seq` and `dropped`, which are
/// spliced in. The bytes are the compact serialisation of
/// `{"jsonrpc":"2.0","method":"event","params":{"kind":…,"seq":…,"dropped":…,"data":…}}`
/// and a newline (EventLineTests compares the two).
struct EventLine: Sendable {
    private let head: [UInt8]
    private let tail: [UInt8]

    /// The line of `event`.
    init(_ event: AgentEvent) {
        head = Array(
            #"{"jsonrpc":"2.0","method":"\#(ControlAPI.eventMethod)","params":{"kind":"\#(event.kind.rawValue)","seq":"#
                .utf8)
        tail = Array(#","data":\#(event.data.serialized(.compact))}}"#.utf8) + [UInt8(ascii: "\n")]
    }

    /// The line as a client with this `sequence` and `dropped` count gets it.
    func bytes(sequence: Int64, dropped: Int64) -> [UInt8] {
        head + Array(String(sequence).utf8) + Array(#","dropped":"#.utf8) + Array(String(dropped).utf8) + tail
    }
}
