import Testing
import JSON
@Test func builds() { #expect(true) }
