import JSON
import PaymentTerminalProfile

/// Why a saved terminal state cannot be restored, named by its field path.
public struct VirtualTerminalSnapshotError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field at fault (`transactions[2].request`).
    public var path: String
    /// What is wrong.
    public var message: String

    /// An error at `path`.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// `PATH: message`.
    public var description: String { "\(path): \(message)" }
}

extension VirtualTerminal {
    /// The terminal's transactions as JSON, so that a restarted terminal
    /// keeps its idempotency records and charges (a real terminal must keep
    /// them longer than any lane may take to reconcile). Pending
    /// transactions keep the latency they had left at `now`.
    public func snapshot(at now: Duration) -> JSON {
        let pending = pendingOrder.filter { entries[$0] != nil }
        let settled = entries.keys.filter { !pending.contains($0) }.sorted()
        let transactions: [JSON] = (pending + settled).compactMap { id in
            guard let entry = entries[id] else { return nil }
            var object: JSONObject = [
                "request": .string(hexText(entry.request.encoded())),
                "status": .string(hexText(entry.status.encoded())),
                "outcome": .int(Int64(entry.outcome.0.rawValue)), "reason": .int(Int64(entry.outcome.1.rawValue)),
                "charges": .int(Int64(ledger.count(for: id))),
            ]
            if entry.status.state == .pending {
                let left = max(Duration.zero, entry.finalAt - now)
                object["remainingMs"] = .int(
                    left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            }
            return .object(object)
        }
        return ["v": 1, "approvals": .int(Int64(approvals)), "transactions": .array(transactions)]
    }

    /// A terminal with `config` and the transactions of a ``snapshot(at:)``,
    /// its clock now reading `now`.
    public init(
        config: VirtualTerminalConfig, restoring snapshot: JSON, at now: Duration
    )
        throws(VirtualTerminalSnapshotError)
    {
        self.init(config: config)
        guard snapshot["v"]?.intValue == 1 else { throw VirtualTerminalSnapshotError(path: "v", "expected 1") }
        guard let approvals = snapshot["approvals"]?.intValue, approvals >= 0 else {
            throw VirtualTerminalSnapshotError(path: "approvals", "expected a non-negative integer")
        }
        self.approvals = Int(approvals)
        guard let list = snapshot["transactions"]?.arrayValue else {
            throw VirtualTerminalSnapshotError(path: "transactions", "expected an array")
        }
        for (index, item) in list.enumerated() {
            let path = "transactions[\(index)]"
            guard let requestBytes = item["request"]?.stringValue.flatMap(bytesFromHex),
                let request = try? PaymentRequest(decoding: requestBytes)
            else { throw VirtualTerminalSnapshotError(path: "\(path).request", "expected a Payment Request in hex") }
            guard let statusBytes = item["status"]?.stringValue.flatMap(bytesFromHex),
                let status = try? TransactionStatus(decoding: statusBytes),
                status.transactionID == request.transactionID
            else {
                throw VirtualTerminalSnapshotError(path: "\(path).status", "expected its Transaction Status in hex")
            }
            guard let rawOutcome = item["outcome"]?.intValue,
                let outcome = TransactionState(rawValue: UInt8(clamping: rawOutcome)),
                outcome.isFinal, let reason = item["reason"]?.intValue, (0...255).contains(reason)
            else {
                throw VirtualTerminalSnapshotError(path: "\(path).outcome", "expected a final state and a reason code")
            }
            guard let charges = item["charges"]?.intValue, (0...1).contains(charges) else {
                throw VirtualTerminalSnapshotError(path: "\(path).charges", "expected 0 or 1")
            }
            guard entries[request.transactionID] == nil else {
                throw VirtualTerminalSnapshotError(path: path, "repeats transaction \(request.transactionID)")
            }
            var finalAt = now
            if status.state == .pending {
                guard let left = item["remainingMs"]?.intValue, left >= 0 else {
                    throw VirtualTerminalSnapshotError(path: "\(path).remainingMs", "expected a non-negative integer")
                }
                finalAt = now + .milliseconds(left)
                pendingOrder.append(request.transactionID)
            }
            entries[request.transactionID] = Entry(
                request: request, status: status, finalAt: finalAt,
                outcome: (outcome, StatusReason(rawValue: UInt8(reason))))
            if charges == 1 { ledger.charge(request) }
        }
    }
}

private func hexText(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
}

private func bytesFromHex(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let high = hexDigit(digits[index]), let low = hexDigit(digits[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
    }
    return bytes
}

private func hexDigit(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
    default: nil
    }
}
