import GATT
import JSON
import PaymentTerminalProfile
import PaymentTerminalScanner
import RoleKit
import Testing

@Suite struct PosControlTests {
    func invalid(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as PluginMethodError {
            return error.code == -32602 ? error.message : "code \(error.code)"
        } catch {
            return "not a PluginMethodError: \(error)"
        }
    }

    @Test func payParamsAreValidated() throws {
        let params = try PosPayParams(params: ["amount": 1250, "currency": "EUR", "reference": "ORD-1"])
        #expect(params.amount == 1250 && params.currency.code == "EUR" && params.reference == "ORD-1")
        #expect(try PosPayParams(params: ["amount": 5, "currency": "USD"]).reference == "")
        let bad: [(JSON?, String)] = [
            (nil, "amount"), (["amount": 0, "currency": "EUR"], "amount"),
            (["amount": 1.5, "currency": "EUR"], "amount"),
            (["amount": 9_007_199_254_740_992, "currency": "EUR"], "amount"),
            (["amount": 1, "currency": "eur"], "currency"),
            (["amount": 1], "currency"), (["amount": 1, "currency": "EUR", "reference": 7], "reference"),
            (["amount": 1, "currency": "EUR", "reference": .string(String(repeating: "x", count: 65))], "reference"),
            (["amount": 1, "currency": "EUR", "tip": 1], "tip"),
        ]
        for (json, name) in bad {
            let message = invalid { _ = try PosPayParams(params: json) }
            #expect(
                message?.hasPrefix(name + ":") == true, "\(String(describing: json)): \(String(describing: message))")
        }
        #expect(
            invalid { _ = try PosPayParams(params: [1, 2]) } == "expected an object of named params, found an array")
    }

    @Test func otherMethodsValidateTheirParams() throws {
        #expect(try PosSelectParams(params: ["terminal": "T1"]).terminal == "T1")
        #expect(invalid { _ = try PosSelectParams(params: ["terminal": ""]) }?.hasPrefix("terminal:") == true)
        #expect(try PosTransactionsParams(params: nil).limit == 100)
        #expect(try PosTransactionsParams(params: ["phase": "reconciling", "limit": 5]).phase == .reconciling)
        #expect(invalid { _ = try PosTransactionsParams(params: ["phase": "done"]) }?.hasPrefix("phase:") == true)
        #expect(invalid { _ = try PosTransactionsParams(params: ["limit": 0]) }?.hasPrefix("limit:") == true)
        #expect(invalid { try posValidateNoParams(["x": 1]) }?.hasPrefix("x:") == true)
        #expect(invalid { try posValidateNoParams(.object(JSONObject())) } == nil)
        #expect(
            PosMethod.allCases.map(\.rawValue) == [
                "pos.pay", "pos.transactions", "pos.terminals", "pos.select", "pos.release",
            ])
    }

    @Test func resultsShowPaymentsAndTerminals() throws {
        var generator = SplitMix(seed: 21)
        let paid = request(1250, "ORD-1", using: &generator)
        let open = request(99, "ORD-2", using: &generator)
        let approved = try TransactionStatus(
            transactionID: paid.transactionID, state: .approved, reason: .none, authorizationCode: "A00001")
        let state = JournalState(replaying: [
            .accepted(paid, terminal: "T1", atMilliseconds: 1000), .sent(paid.transactionID, attempt: 1),
            .final(approved), .accepted(open, terminal: "T1", atMilliseconds: 2000),
            .reconciling(open.transactionID, why: "link lost"),
        ])
        let all = try PosTransactionsParams(params: nil).result(state)
        #expect(
            all["transactions"]?[1]
                == [
                    "transactionId": .string(paid.transactionID.uuidString), "amount": 1250, "currency": "EUR",
                    "reference": "ORD-1", "terminal": "T1", "phase": "final", "acceptedAt": 1000, "state": "approved",
                    "authCode": "A00001",
                ])
        #expect(all["transactions"]?[0]?["reconciling"] == "link lost")
        let reconciling = try PosTransactionsParams(params: ["phase": "reconciling"]).result(state)
        #expect(reconciling["transactions"]?.arrayValue?.count == 1)
        var table = TerminalTable(policy: SelectionPolicy())
        table.observe(id: "T1", name: "Lane 1", rssi: -50, at: .zero)
        #expect(
            posTerminalsJSON(table)
                == [
                    "terminals": [
                        [
                            "id": "T1", "rssi": -50, "selected": true, "name": "Lane 1", "battery": .null,
                            "terminalId": .null,
                        ]
                    ],
                    "selected": "T1",
                ])
        #expect(PosError.paymentUnknown(open.transactionID, why: "link lost").code == 1003)
    }
}

@Suite struct ReconciliationPlannerTests {
    @Test func eachAnswerMovesThePaymentAsDocumented() throws {
        var generator = SplitMix(seed: 31)
        let pay = request(500, "R", using: &generator)
        let id = pay.transactionID
        let state = JournalState(replaying: [
            .accepted(pay, terminal: "T1", atMilliseconds: 0), .sent(id, attempt: 1), .reconciling(id, why: "lost"),
        ])
        #expect(ReconciliationPlanner.queries(in: state, terminal: "T1") == [id])
        #expect(ReconciliationPlanner.queries(in: state, terminal: "T2").isEmpty)
        let unknown = TransactionStatus(transactionID: id, state: .unknown)
        #expect(ReconciliationPlanner.step(for: id, in: state, answer: unknown, from: "T1") == .resend(pay, attempt: 2))
        #expect(ReconciliationPlanner.step(for: id, in: state, answer: unknown, from: "T2") == .ignore)
        let pending = TransactionStatus(transactionID: id, state: .pending)
        #expect(ReconciliationPlanner.step(for: id, in: state, answer: pending, from: "T1") == .wait)
        let declined = TransactionStatus(transactionID: id, state: .declined, reason: .issuerDeclined)
        #expect(
            ReconciliationPlanner.step(for: id, in: state, answer: declined, from: "T1") == .settle(.final(declined)))
        var settled = state
        settled.apply(.final(declined))
        #expect(ReconciliationPlanner.step(for: id, in: settled, answer: unknown, from: "T1") == .ignore)
        #expect(ReconciliationPlanner.markUnknown(in: settled, why: "restart").isEmpty)
        let fresh = JournalState(replaying: [.accepted(pay, terminal: "T1", atMilliseconds: 0)])
        #expect(ReconciliationPlanner.markUnknown(in: fresh, why: "restart") == [.reconciling(id, why: "restart")])
    }

    @Test func writeRefusalsSettleAsFailedBusyRetriesAndOtherErrorsReconcile() {
        var generator = SplitMix(seed: 32)
        let pay = request(500, "R", using: &generator)
        let id = pay.transactionID
        let state = JournalState(replaying: [.accepted(pay, terminal: "T1", atMilliseconds: 0)])
        let failed = JournalRecord.final(TransactionStatus(transactionID: id, state: .failed, reason: .terminalError))
        for refusal in [PaymentTerminalATTError.malformedValue, .init(0x80), .init(0x82)] {
            #expect(ReconciliationPlanner.step(for: id, in: state, writeError: refusal) == .settle(failed))
        }
        #expect(ReconciliationPlanner.step(for: id, in: state, writeError: PaymentTerminalATTError.busy) == .retryLater)
        for unknown in [ATTError.unlikelyError, .insufficientResources, .init(0x84)] {
            #expect(ReconciliationPlanner.step(for: id, in: state, writeError: unknown) == .reconcile)
        }
        var settled = state
        settled.apply(failed)
        #expect(ReconciliationPlanner.step(for: id, in: settled, writeError: PaymentTerminalATTError.busy) == .ignore)
    }
}
