import GATT
import JSON
import PaymentTerminalProfile
import Testing
import VirtualPaymentTerminal

@Suite struct VirtualTerminalTests {
    func terminal(_ json: JSON = ["latencyMs": 1000]) throws -> VirtualTerminal {
        VirtualTerminal(config: try VirtualTerminalConfig(json: json))
    }

    @Test func approvesAfterTheLatencyAndChargesOnce() throws {
        var terminal = try terminal()
        let request = euro(1250, "ORD-1")
        let first = try terminal.receivePaymentRequest(request.encoded(), at: .zero)
        #expect(first.map(\.state) == [.pending])
        #expect(terminal.nextDeadline == .milliseconds(1000))
        #expect(terminal.advance(to: .milliseconds(999)).isEmpty)
        #expect(terminal.ledger.count(for: fixtureID) == 0)
        let settled = terminal.advance(to: .milliseconds(1000))
        #expect(settled.map(\.state) == [.approved])
        #expect(settled.first?.authorizationCode == "A00001")
        #expect(terminal.ledger.count(for: fixtureID) == 1)
        #expect(terminal.nextDeadline == nil)
    }

    @Test func theSameRequestAgainNeverChargesTwice() throws {
        var terminal = try terminal()
        let request = euro(1250, "ORD-1")
        _ = try terminal.submit(request, at: .zero)
        #expect(try terminal.submit(request, at: .milliseconds(10)).map(\.state) == [.pending])
        _ = terminal.advance(to: .seconds(2))
        let again = try terminal.submit(request, at: .seconds(3))
        #expect(again.map(\.state) == [.approved])
        #expect(terminal.ledger.count(for: fixtureID) == 1)
        #expect(terminal.ledger.totalCharges == 1)
        #expect(terminal.transactionCount == 1)
    }

    @Test func aDifferentRequestUnderAKnownIDIsRefused() throws {
        var terminal = try terminal()
        _ = try terminal.submit(euro(1250, "ORD-1"), at: .zero)
        for other in [euro(1251, "ORD-1"), euro(1250, "ORD-2")] {
            #expect(throws: PaymentTerminalATTError.idempotencyConflict) { try terminal.submit(other, at: .zero) }
        }
        _ = terminal.advance(to: .seconds(5))
        #expect(terminal.ledger.count(for: fixtureID) == 1)
        #expect(terminal.ledger.totals[try CurrencyCode("EUR")] == 1250)
    }

    @Test func rulesDeclineByAmountCurrencyAndReferenceInOrder() throws {
        var terminal = try terminal([
            "latencyMs": 0,
            "rules": [
                ["amountAbove": 10_000, "outcome": "declined", "reason": "amountLimit"],
                ["currency": "USD", "outcome": "declined", "reason": "currencyNotAccepted"],
                ["reference": "FAIL-*", "outcome": "failed"],
                ["reference": "CANCEL-??", "outcome": "cancelled"],
            ],
        ])
        var generator = SplitMix(seed: 1)
        func pay(_ amount: UInt64, _ currency: String, _ reference: String) throws -> TransactionStatus? {
            let id = TransactionID.random(using: &generator)
            let request = try PaymentRequest(
                transactionID: id, amount: amount, currency: CurrencyCode(currency), reference: reference)
            return try terminal.submit(request, at: .zero).last
        }
        #expect(try pay(10_001, "EUR", "a")?.state == .declined)
        #expect(try pay(10_001, "EUR", "a")?.reason == .amountLimit)
        #expect(try pay(10_000, "EUR", "a")?.state == .approved)
        #expect(try pay(100, "USD", "a")?.reason == .currencyNotAccepted)
        #expect(try pay(100, "EUR", "FAIL-7")?.state == .failed)
        #expect(try pay(100, "EUR", "CANCEL-12")?.state == .cancelled)
        #expect(try pay(100, "EUR", "CANCEL-123")?.state == .approved)
        #expect(try pay(20_000, "USD", "FAIL-1")?.reason == .amountLimit)
        #expect(terminal.ledger.totalCharges == 2)
    }

    @Test func statusQueriesAnswerKnownAndUnknownIDs() throws {
        var terminal = try terminal()
        let unknown = try terminal.receiveStatusQuery(StatusQuery(transactionID: fixtureID).encoded(), at: .zero)
        #expect(unknown == [TransactionStatus(transactionID: fixtureID, state: .unknown)])
        _ = try terminal.submit(euro(5), at: .zero)
        #expect(terminal.query(fixtureID, at: .milliseconds(500)).map(\.state) == [.pending])
        #expect(terminal.query(fixtureID, at: .milliseconds(1500)).map(\.state) == [.approved])
        #expect(terminal.query(fixtureID, at: .milliseconds(1600)).map(\.state) == [.approved])
        #expect(terminal.ledger.count(for: fixtureID) == 1)
    }

    @Test func badWritesGetTheDocumentedATTErrors() throws {
        var terminal = try terminal()
        #expect(throws: PaymentTerminalATTError.malformedValue) {
            try terminal.receivePaymentRequest([1, 2], at: .zero)
        }
        #expect(throws: PaymentTerminalATTError.unsupportedVersion) {
            try terminal.receivePaymentRequest([2] + euro(5).encoded().dropFirst(), at: .zero)
        }
        #expect(throws: PaymentTerminalATTError.malformedValue) { try terminal.receiveStatusQuery([1], at: .zero) }
        #expect(terminal.transactionCount == 0)
    }

    @Test func cancellingAPendingTransactionNeverCharges() throws {
        var terminal = try terminal()
        _ = try terminal.submit(euro(5), at: .zero)
        #expect(terminal.cancel(fixtureID, at: .milliseconds(10))?.map(\.state) == [.cancelled])
        #expect(terminal.advance(to: .seconds(10)).isEmpty)
        #expect(terminal.ledger.totalCharges == 0)
        #expect(terminal.cancel(fixtureID, at: .seconds(11)) == nil)
    }

    @Test func configDefaultsAndValues() throws {
        let defaults = try VirtualTerminalConfig(json: [:])
        #expect(
            defaults.name == "Payment Terminal" && defaults.batteryLevel == 100 && defaults.latency == .seconds(1.5))
        let config = try VirtualTerminalConfig(json: [
            "name": "Lane 3", "terminalId": "T-3", "vendor": "ACME", "model": "P400", "firmware": "4.2",
            "capabilities": ["contactless", "printer"], "batteryLevel": 42, "latencyMs": 250,
        ])
        #expect(config.info.terminalID == "T-3" && config.info.capabilities == [.contactless, .printer])
        #expect(VirtualTerminal(config: config).batteryLevelValue == [42])
        #expect(try TerminalInfo(decoding: VirtualTerminal(config: config).terminalInfoValue) == config.info)
    }

    @Test func configErrorsNameTheField() {
        let cases: [(JSON, String)] = [
            (["color": "red"], "color"),
            (["batteryLevel": 101], "batteryLevel"),
            (["latencyMs": "fast"], "latencyMs"),
            (["name": .string(String(repeating: "n", count: 30))], "name"),
            (["terminalId": ""], "terminalId"),
            (["capabilities": ["contactless", "telepathy"]], "capabilities[1]"),
            (
                ["rules": [["currency": "USD", "outcome": "declined"], ["amountAbove": 5, "outcome": "maybe"]]],
                "rules[1].outcome"
            ),
            (["rules": [["outcome": "declined"]]], "rules[0]"),
            (["rules": [["currency": "usd", "outcome": "declined"]]], "rules[0].currency"),
            (["rules": [["currency": "USD", "outcome": "declined", "why": 1]]], "rules[0].why"),
            (["rules": [["currency": "USD", "outcome": "pending"]]], "rules[0].outcome"),
            ([1, 2], ""),
        ]
        for (json, path) in cases {
            let error = #expect(throws: JSONFieldErrors.self) { try VirtualTerminalConfig(json: json) }
            #expect(error?.errors.map(\.path) == [path], "\(json.serialized()): \(String(describing: error))")
        }
    }

    @Test func everyConfigErrorIsReported() {
        let error = #expect(throws: JSONFieldErrors.self) {
            try VirtualTerminalConfig(json: [
                "batteryLevel": 101, "latencyMs": "fast",
                "rules": [["outcome": "declined"], ["currency": "usd", "outcome": "maybe", "why": 1]],
            ])
        }
        #expect(
            error?.errors.map(\.path) == [
                "batteryLevel", "latencyMs", "rules[0]", "rules[1].why", "rules[1].currency", "rules[1].outcome",
            ])
    }

    @Test func aRestoredTerminalKeepsIdempotencyChargesAndPendingLatency() throws {
        var terminal = try terminal(["latencyMs": 1000, "rules": [["amountAbove": 100, "outcome": "declined"]]])
        var generator = SplitMix(seed: 5)
        let approved = try PaymentRequest(
            transactionID: .random(using: &generator), amount: 50, currency: CurrencyCode("EUR"), reference: "a")
        let declined = try PaymentRequest(
            transactionID: .random(using: &generator), amount: 500, currency: CurrencyCode("EUR"), reference: "b")
        _ = try terminal.submit(approved, at: .zero)
        _ = try terminal.submit(declined, at: .milliseconds(1500))
        _ = terminal.advance(to: .milliseconds(1500))
        let saved = try JSON(parsing: terminal.snapshot(at: .milliseconds(1800)).serialized())
        var restored = try VirtualTerminal(config: terminal.config, restoring: saved, at: .seconds(100))
        #expect(restored.ledger.count(for: approved.transactionID) == 1)
        #expect(restored.status(of: declined.transactionID)?.state == .pending)
        #expect(restored.nextDeadline == .seconds(100) + .milliseconds(700))
        #expect(try restored.submit(approved, at: .seconds(100)).last?.state == .approved)
        #expect(throws: PaymentTerminalATTError.idempotencyConflict) {
            try restored.submit(euro(7, id: approved.transactionID), at: .seconds(100))
        }
        #expect(restored.advance(to: .seconds(101)).map(\.state) == [.declined])
        #expect(restored.ledger.totalCharges == 1)
        let next = try PaymentRequest(
            transactionID: .random(using: &generator), amount: 5, currency: CurrencyCode("EUR"), reference: "c")
        _ = try restored.submit(next, at: .seconds(101))
        #expect(restored.advance(to: .seconds(103)).first?.authorizationCode == "A00002")
    }

    @Test func aDamagedSnapshotIsATypedErrorNamingTheField() throws {
        let config = try VirtualTerminalConfig(json: [:])
        let cases: [(JSON, String)] = [
            (["v": 2], "v"),
            (["v": 1, "approvals": 0, "transactions": [["request": "zz"]]], "transactions[0].request"),
            (
                [
                    "v": 1, "approvals": 0,
                    "transactions": [["request": .string(hexString(euro(5).encoded())), "status": "01"]],
                ], "transactions[0].status"
            ),
        ]
        for (json, path) in cases {
            do {
                _ = try VirtualTerminal(config: config, restoring: json, at: .zero)
                Issue.record("restored \(json.serialized())")
            } catch {
                #expect(error.path == path)
            }
        }
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}
