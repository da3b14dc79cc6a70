import PaymentTerminalProfile

/// The Payment Terminal profile's wire formats as a peer writes or indicates
/// them: what the virtual terminal reads (Payment Request, Status Query) and
/// what the scanner reads (Transaction Status, Terminal Info, Battery Level).
/// The same bytes go to every decoder.
///
/// Checks: each value a decoder accepts encodes back to the bytes it came
/// from (every format has exactly one encoding).
enum PaymentTerminalTarget {
    static let target = FuzzTarget(
        name: "payment-terminal", summary: "payment request, status query, transaction status, terminal info",
        seeds: { seeds() }, body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        if let request = try? PaymentRequest(decoding: input) {
            try require(request.encoded() == input, "payment request \(input) re-encodes as \(request.encoded())")
        }
        if let query = try? StatusQuery(decoding: input) {
            try require(query.encoded() == input, "status query \(input) re-encodes as \(query.encoded())")
        }
        if let status = try? TransactionStatus(decoding: input) {
            try require(status.encoded() == input, "transaction status \(input) re-encodes as \(status.encoded())")
        }
        if let info = try? TerminalInfo(decoding: input) {
            try require(info.encoded() == input, "terminal info \(input) re-encodes as \(info.encoded())")
        }
        _ = try? PaymentTerminalProfile.decodeBatteryLevel(input)
    }

    /// The profile tests' fixtures, encoded.
    static func seeds() -> [[UInt8]] {
        let id = try! TransactionID(parsing: "00112233-4455-6677-8899-aabbccddeeff")
        let euro = try! CurrencyCode("EUR")
        return [
            try! PaymentRequest(transactionID: id, amount: 1250, currency: euro, reference: "order-42").encoded(),
            try! PaymentRequest(
                transactionID: id, amount: PaymentRequest.maximumAmount, currency: euro,
                reference: String(repeating: "é", count: 32)
            ).encoded(),
            StatusQuery(transactionID: id).encoded(),
            TransactionStatus(transactionID: id, state: .declined, reason: StatusReason(rawValue: 0x51)).encoded(),
            try! TransactionStatus(
                transactionID: id, state: .approved, reason: .none, authorizationCode: "A1B2C3"
            ).encoded(),
            try! TerminalInfo(
                terminalID: "T-0001", vendor: "Acme", model: "V1", firmware: "1.0.3",
                capabilities: TerminalCapabilities(rawValue: 0x0007)
            ).encoded(),
            [0x64],
        ]
    }
}
