import FuzzTargets
import Glibc
import Testing

/// The checked-in corpora and reproducers run through their targets in the
/// normal build: every input a fuzzer once found interesting, and every
/// input that once crashed a parser, stays handled.
@Suite struct CorpusReplayTests {
    static let fuzzDirectory: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/Fuzz"
    }()

    @Test(arguments: FuzzTargets.all.map(\.name))
    func everyCorpusInputAndReproducerPasses(_ name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let corpus = FuzzFiles.files(in: "\(Self.fuzzDirectory)/Corpus/\(name)")
        #expect(!corpus.isEmpty, "Tests/Fuzz/Corpus/\(name) holds the target's seeds")
        for path in corpus + FuzzFiles.files(in: "\(Self.fuzzDirectory)/Regressions/\(name)") {
            let input = try FuzzFiles.read(path).get()
            do {
                try target.run(input)
            } catch {
                Issue.record("\(path): \(error)")
            }
        }
    }

    @Test func everySeedPasses() {
        for target in FuzzTargets.all {
            for seed in target.seeds() {
                do {
                    try target.run(seed)
                } catch {
                    Issue.record("\(target.name) seed \(seed): \(error)")
                }
            }
        }
    }

    @Test func reproducersLiveInTheirTargetsDirectory() {
        let names = Set(FuzzTargets.all.map(\.name))
        for entry in FuzzFiles.entries(in: "\(Self.fuzzDirectory)/Regressions") {
            #expect(
                entry.isDirectory && names.contains(entry.name),
                "Tests/Fuzz/Regressions/\(entry.name) is not a target's directory")
        }
    }
}
