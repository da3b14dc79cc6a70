import PaymentTerminalProfile

/// Hex text to bytes (spaces ignored); test fixtures only.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0 }
}

let fixtureID = try! TransactionID(parsing: "00112233-4455-6677-8899-aabbccddeeff")
let idHex = "00112233445566778899aabbccddeeff"

func euro(_ amount: UInt64, _ reference: String = "", id: TransactionID = fixtureID) -> PaymentRequest {
    try! PaymentRequest(transactionID: id, amount: amount, currency: try! CurrencyCode("EUR"), reference: reference)
}
