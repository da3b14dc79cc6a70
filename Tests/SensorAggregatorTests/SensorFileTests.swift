import BLETesting
import Glibc
import SensorAggregator
import Testing

@Suite struct SensorFileTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func hwmonMillidegreesScaleToDegrees() throws {
        let source = FileSource(path: "/sys/class/hwmon/hwmon0/temp1_input", scale: 0.001, pollSeconds: 5)
        #expect(try SensorFileParser.value(raw: bytes("23500\n"), source: source) == 23.5)
        #expect(try SensorFileParser.value(raw: bytes("-1250\n"), source: source) == -1.25)
    }

    @Test func iioRawPlusOffsetTimesScale() throws {
        // in_temp_raw 1200, in_temp_offset -500, in_temp_scale 30.0 (m°C per LSB):
        // (1200 - 500) * 30 = 21000 m°C -> 21.0 °C.
        let source = FileSource(path: "/sys/bus/iio/devices/iio:device0/in_temp_raw", scale: 0.001, pollSeconds: 1)
        let value = try SensorFileParser.value(
            raw: bytes("1200\n"), fileOffset: bytes("-500\n"), fileScale: bytes("30.000000\n"), source: source)
        #expect(abs(value - 21.0) < 1e-9)
        // A configured offset is added after the file scale.
        let shifted = FileSource(path: "/x", scale: 2, offset: 1.5, pollSeconds: 1)
        #expect(try SensorFileParser.value(raw: bytes("10"), source: shifted) == 23)
    }

    @Test func anythingButOneDecimalNumberIsRefused() throws {
        for text in ["", "\n", "abc", "12 34", "0x10", "inf", "nan", "1e", "--1", ".", "12\u{0}", "1.2.3"] {
            #expect(throws: SensorFileError.self, "\(text)") { try SensorFileParser.number(in: bytes(text)) }
        }
        #expect(try SensorFileParser.number(in: bytes(" +1.5e3 \n")) == 1500)
        #expect(try SensorFileParser.number(in: bytes("-.5")) == -0.5)
    }

    @Test func theReaderReadsRealFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        directory.write("in_temp_raw", "1200\n")
        directory.write("in_temp_scale", "30.0\n")
        directory.write("broken", "N/A\n")
        let reader = SensorFileReader()
        let source = FileSource(
            path: "\(directory.path)/in_temp_raw", scale: 0.001, scalePath: "\(directory.path)/in_temp_scale",
            pollSeconds: 1)
        let value = try await reader.read(source)
        #expect(abs(value - 36.0) < 1e-9)
        await #expect(throws: SensorFileError.notANumber("N/A\n")) {
            try await reader.read(FileSource(path: "\(directory.path)/broken", pollSeconds: 1))
        }
        await #expect(throws: SensorFileError.self) {
            try await reader.read(FileSource(path: "\(directory.path)/missing", pollSeconds: 1))
        }
    }

    /// A FIFO (or a device) at a sensor path would hold the read for ever: it
    /// is refused at once, named for what it is, with no writer ever opening it.
    @Test func aSensorPathThatIsNotARegularFileIsRefusedAtOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fifo = "\(directory.path)/fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        let reader = SensorFileReader()
        do {
            _ = try await reader.read(FileSource(path: fifo, pollSeconds: 1))
            Issue.record("a FIFO was read")
        } catch {
            #expect("\(error)".contains("is a FIFO, not a regular file"), "\(error)")
        }
        do {
            _ = try await reader.read(FileSource(path: "/dev/zero", pollSeconds: 1))
            Issue.record("a device was read")
        } catch {
            #expect("\(error)".contains("is a character device, not a regular file"), "\(error)")
        }
    }
}

@Suite struct SimulatedWaveformTests {
    @Test func aSeedReplaysTheSameSeries() {
        let source = SimulatedSource(waveform: .sine, base: 45, amplitude: 10, periodSeconds: 600, noise: 0.5, seed: 42)
        let first = (0..<50).map { SimulatedWaveform.value(of: source, tick: $0) }
        let second = (0..<50).map { SimulatedWaveform.value(of: source, tick: $0) }
        #expect(first == second)
        var other = source
        other.seed = 43
        #expect((0..<50).map { SimulatedWaveform.value(of: other, tick: $0) } != first)
        #expect(first.allSatisfy { (34.5...55.5).contains($0) })
    }

    @Test func shapesWithoutNoiseHitTheirKnownPoints() {
        func value(_ shape: WaveformShape, _ tick: UInt64) -> Double {
            SimulatedWaveform.value(
                of: SimulatedSource(waveform: shape, base: 20, amplitude: 5, periodSeconds: 40, pollSeconds: 10),
                tick: tick)
        }
        // Tick 1 is a quarter period.
        #expect(abs(value(.sine, 1) - 25) < 1e-9)
        #expect(abs(value(.sine, 3) - 15) < 1e-9)
        #expect(value(.square, 1) == 25)
        #expect(value(.square, 2) == 15)
        #expect(value(.sawtooth, 0) == 15)
        #expect(value(.sawtooth, 2) == 20)
        #expect(value(.constant, 3) == 20)
    }
}
