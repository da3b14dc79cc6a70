import BTHomeCrypto
import Glibc
import IO
import SensorGateway
import Testing

@testable import SensorGateway

/// The key file: its format, errors that never show a key, the mode checks.
@Suite struct BindKeyFileTests {
    static let text = """
        # Shelly BLU H&T
        54:48:E6:8F:80:A5  231d39c1d7cc1ab1aee224cd096db932

        b4:35:22:f5:3d:a4\t90BFFD73CB6B26EF58A7A8EBA9232036\r
        """

    @Test func parsesAddressesAndKeys() throws {
        let file = try BindKeyFile.parse(Array(Self.text.utf8))
        #expect(file.keys.count == 2)
        #expect(
            file.keys[DeviceAddress("54:48:E6:8F:80:A5")!] == BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db932"))
        #expect(
            file.keys[DeviceAddress("B4:35:22:F5:3D:A4")!] == BTHomeBindKey(hex: "90bffd73cb6b26ef58a7a8eba9232036"))
    }

    @Test func errorsNameTheLineNeverItsText() {
        let secret = "231d39c1d7cc1ab1aee224cd096db93"  // one digit short
        for (text, expected) in [
            ("54:48:E6:8F:80:A5 \(secret)", BindKeyFileError.line(1, "the bind key is not 32 hex digits")),
            ("#\n54:48:E6:8F:80 \(secret)1", .line(2, "the address is not AA:BB:CC:DD:EE:FF")),
            ("\(secret)1", .line(1, "expected an address and a bind key")),
            (
                "54:48:E6:8F:80:A5 \(secret)1\n54:48:e6:8f:80:a5 \(secret)2",
                .line(2, "a second key for 54:48:E6:8F:80:A5")
            ),
        ] {
            #expect(throws: expected) { try BindKeyFile.parse(Array(text.utf8)) }
            #expect(!expected.description.contains(secret))
        }
        #expect(throws: BindKeyFileError.notText) { try BindKeyFile.parse([0xFF, 0xFE]) }
        #expect(DeviceAddress("54:48:E6:8F:80:A\u{FF15}") == nil)  // a fullwidth digit
        #expect(DeviceAddress("54:48:E6:8F:80") == nil && DeviceAddress("54:48:E6:8F:80:A5:00") == nil)
        #expect(DeviceAddress("54:48:e6:8f:80:a5")?.description == "54:48:E6:8F:80:A5")
    }

    @Test func theFileMustBeTheOwnersOnly() throws {
        let directory = String(cString: mkdtemp(strdup("/tmp/bindkeys-XXXXXX"))!)
        defer { _ = system("rm -rf '\(directory)'") }
        let path = "\(directory)/keys"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = Self.text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        #expect(try BindKeyFileReader.read(path).keys.count == 2)
        chmod(path, 0o640)
        #expect(throws: BindKeyFileError.tooOpen(mode: 0o640)) { try BindKeyFileReader.read(path) }
        chmod(path, 0o604)
        #expect(throws: BindKeyFileError.tooOpen(mode: 0o604)) { try BindKeyFileReader.read(path) }
        chmod(path, 0o400)
        #expect(try BindKeyFileReader.read(path).keys.count == 2)
        #expect(throws: BindKeyFileError.notRegularFile) { try BindKeyFileReader.read(directory) }
        #expect(
            throws: BindKeyFileError.system(SystemError("open", path: "\(directory)/missing", errno: .noSuchFile))
        ) {
            try BindKeyFileReader.read("\(directory)/missing")
        }
        #expect(
            BindKeyFileError.tooOpen(mode: 0o644).description
                == "group or others may access it (mode 644): allow the owner only (chmod 600)")
    }
}
