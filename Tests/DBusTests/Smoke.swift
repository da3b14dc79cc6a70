import Testing
import DBus
@Test func builds() { #expect(true) }
