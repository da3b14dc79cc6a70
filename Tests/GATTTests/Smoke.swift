import Testing
import GATT
@Test func builds() { #expect(true) }
