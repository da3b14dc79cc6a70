import AgentCore
import ControlProtocol
import JSON
import PaymentTerminalScanner

/// The control socket's byte stream as the agent reads it: ``LineFramer``
/// cuts it into lines (fed in chunks the input chooses), ``RequestDecoder``
/// turns each line into a call or the error reply it deserves, and the reply
/// is serialised as the server writes it; the params of the payment lane's
/// `pos.*` methods go to the scanner plugin's schema and typed params. blectl's reading
/// of a line (``RPCIncoming``) runs on the same lines.
///
/// Checks: the frames do not depend on how the stream was chunked and match
/// a reference splitter; a call has a method and params of an allowed kind;
/// every reply serialises to one line of JSON that parses back.
enum ControlStreamTarget {
    static let target = FuzzTarget(
        name: "control-stream", summary: "control socket bytes: line framing, JSON-RPC request decoding, error replies",
        seeds: { seeds }, body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        var generator = InputDerivedGenerator(input)
        let maxLineBytes = [8, 100, 1 << 20][generator.next(below: 3)]
        var framer = LineFramer(maxLineBytes: maxLineBytes)
        var frames: [LineFramer.Frame] = []
        var offset = 0
        while offset < input.count {
            let size = min(input.count - offset, 1 + generator.next(below: 64))
            frames += framer.append(input[offset..<(offset + size)])
            offset += size
        }
        let expected = referenceFrames(input, maxLineBytes: maxLineBytes)
        try require(frames == expected, "chunked framing gave \(frames), the reference \(expected)")
        for case .line(let line) in frames {
            try decode(line)
        }
    }

    private static func decode(_ line: [UInt8]) throws(FuzzFinding) {
        let reply: JSON
        switch RequestDecoder.decode(line) {
        case .call(let call):
            try require(!call.method.isEmpty, "a call with an empty method from \(line)")
            switch call.params {
            case nil, .object?, .array?: break
            default: throw FuzzFinding("params \(String(describing: call.params)) accepted from \(line)")
            }
            try validateParams(call)
            reply = RPCMessage.error(
                id: call.id ?? .null, RPCError(.methodNotFound, "method not found: \(call.method)"))
        case .reject(let id, let error):
            reply = RPCMessage.error(id: id, error)
        }
        let text = reply.serialized()
        try require(!text.utf8.contains(UInt8(ascii: "\n")), "a reply with a raw newline: \(text)")
        let parsed: JSON
        do {
            parsed = try JSON(parsing: text, options: JSONParseOptions(maxInputBytes: .max))
        } catch {
            throw FuzzFinding("the reply \(text) does not parse back: \(error)")
        }
        try require(RPCIncoming(parsed) != nil, "blectl cannot read the reply \(text)")
        if let json = try? JSON(parsing: line) { _ = RPCIncoming(json) }
    }

    /// The payment lane's `pos.*` params: the schema the agent checks before
    /// the handler runs and the typed params the handler reads must agree.
    private static func validateParams(_ call: RPCCall) throws(FuzzFinding) {
        guard let method = PosMethod(rawValue: call.method) else { return }
        let accepted = (try? method.arguments(call.params)) != nil
        let typed: Bool
        switch method {
        case .pay: typed = (try? PosPayParams(params: call.params)) != nil
        case .transactions: typed = (try? PosTransactionsParams(params: call.params)) != nil
        case .select: typed = (try? PosSelectParams(params: call.params)) != nil
        case .terminals, .release: typed = (try? posValidateNoParams(call.params)) != nil
        }
        try require(
            accepted == typed,
            "\(call.method): the schema \(accepted ? "accepts" : "refuses") \(String(describing: call.params)), "
                + "the typed params \(typed ? "accept" : "refuse") them")
    }

    /// The frames of `stream` read in one piece, from the framer's contract:
    /// newline-terminated lines, a trailing CR removed, lines of JSON
    /// whitespace only (space, tab, CR) skipped,
    /// a line longer than the limit reported once (also while unfinished).
    static func referenceFrames(_ stream: [UInt8], maxLineBytes: Int) -> [LineFramer.Frame] {
        var frames: [LineFramer.Frame] = []
        let pieces = stream.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, piece) in pieces.enumerated() {
            let complete = index < pieces.count - 1
            if piece.count > maxLineBytes {
                frames.append(.oversized)
            } else if complete {
                var line = Array(piece)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                let blank: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r")]
                if !line.allSatisfy(blank.contains) { frames.append(.line(line)) }
            }
        }
        return frames
    }

    static let seeds: [[UInt8]] = [
        #"{"jsonrpc":"2.0","id":1,"method":"agent.status"}"#,
        #"{"jsonrpc":"2.0","id":"a","method":"central.scan.start","params":{"durationSeconds":5,"allowDuplicates":true}}"#,
        #"{"jsonrpc":"2.0","method":"events.subscribe","params":{"topics":["scan","state"]}}"#,
        #"{"jsonrpc":"2.0","id":7,"method":"pos.pay","params":{"amount":1250,"currency":"EUR","reference":"A-1"}}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"pos.transactions","params":{"phase":"final","limit":10}}"#,
        #"{"jsonrpc":"2.0","id":4,"method":"pos.select","params":{"terminal":"T-0001"}}"# + "\n"
            + #"{"jsonrpc":"2.0","id":5,"method":"pos.release","params":{}}"#,
        #"{"jsonrpc":"2.0","id":8,"method":"central.write","params":{"peripheral":"p","characteristic":"2a37","value":"0102","withResponse":false}}"#,
        #"{"jsonrpc":"2.0","id":null,"method":"agent.shutdown"}"# + "\r\n\n"
            + #"{"jsonrpc":"2.0","id":2,"method":"agent.status"}"# + "\n",
        #"[{"jsonrpc":"2.0","id":1,"method":"agent.status"}]"# + "\n" + #"{"id":1.5}"# + "\n" + "garbage\n",
        #"{"jsonrpc":"1.0","id":[1],"method":"","params":3}"# + "\n   \n\u{FF}\u{FE}\n",
        #"{"jsonrpc":"2.0","id":9223372036854775807,"method":"x","params":[[[[[[[[[[1]]]]]]]]]]}"#,
    ].map(\.bytes)
}
