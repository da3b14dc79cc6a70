import GATT
import Testing

@Suite struct ATTErrorTests {
    @Test func specCodesHaveTheirNames() {
        let named: [(ATTError, UInt8, String)] = [
            (.invalidHandle, 0x01, "Invalid Handle"),
            (.readNotPermitted, 0x02, "Read Not Permitted"),
            (.writeNotPermitted, 0x03, "Write Not Permitted"),
            (.invalidPDU, 0x04, "Invalid PDU"),
            (.insufficientAuthentication, 0x05, "Insufficient Authentication"),
            (.requestNotSupported, 0x06, "Request Not Supported"),
            (.invalidOffset, 0x07, "Invalid Offset"),
            (.insufficientAuthorization, 0x08, "Insufficient Authorization"),
            (.prepareQueueFull, 0x09, "Prepare Queue Full"),
            (.attributeNotFound, 0x0A, "Attribute Not Found"),
            (.attributeNotLong, 0x0B, "Attribute Not Long"),
            (.insufficientEncryptionKeySize, 0x0C, "Encryption Key Size Too Short"),
            (.invalidAttributeValueLength, 0x0D, "Invalid Attribute Value Length"),
            (.unlikelyError, 0x0E, "Unlikely Error"),
            (.insufficientEncryption, 0x0F, "Insufficient Encryption"),
            (.unsupportedGroupType, 0x10, "Unsupported Group Type"),
            (.insufficientResources, 0x11, "Insufficient Resources"),
            (.databaseOutOfSync, 0x12, "Database Out Of Sync"),
            (.valueNotAllowed, 0x13, "Value Not Allowed"),
            (.writeRequestRejected, 0xFC, "Write Request Rejected"),
            (.cccdImproperlyConfigured, 0xFD, "Client Characteristic Configuration Descriptor Improperly Configured"),
            (.procedureAlreadyInProgress, 0xFE, "Procedure Already in Progress"),
            (.outOfRange, 0xFF, "Out of Range"),
        ]
        for (error, code, name) in named {
            #expect(error.rawValue == code)
            #expect(ATTError(rawValue: code) == error)
            #expect(error.name == name)
        }
        #expect(ATTError.readNotPermitted.description == "Read Not Permitted (0x02)")
    }

    @Test func everyCodeRoundTripsIncludingUnknownOnes() {
        for code in UInt8.min...UInt8.max {
            #expect(ATTError(rawValue: code).rawValue == code)
        }
        #expect(ATTError(0x42).name == nil)
        #expect(ATTError(0x42).description == "Reserved (0x42)")
        #expect(ATTError(0xE5).description == "Common Profile Error (0xE5)")
    }

    @Test func applicationErrorsAre0x80Through0x9F() {
        #expect(ATTError.application(0x85)?.description == "Application Error (0x85)")
        #expect(ATTError.application(0x7F) == nil)
        #expect(ATTError.application(0xA0) == nil)
        #expect(ATTError(0x80).isApplicationError && ATTError(0x9F).isApplicationError)
        #expect(!ATTError.outOfRange.isApplicationError && ATTError.outOfRange.isCommonProfileError)
    }

    @Test func itIsThrownAndCaughtAsAnError() {
        func refuse() throws { throw ATTError.insufficientEncryption }
        #expect(throws: ATTError.insufficientEncryption) { try refuse() }
        do {
            try refuse()
        } catch let error as ATTError {
            #expect(error == .insufficientEncryption)
        } catch {
            Issue.record("caught \(error) as something else")
        }
    }
}
