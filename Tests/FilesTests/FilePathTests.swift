import InternalProtocol
import TestSupport
import Testing

@testable import FilesService

/// The one normalisation every path goes through: decoded once, NFC, and refused (6006) for
/// anything that could name something outside the app's tree or mean two things.
@Suite(.tags(.fast)) struct FilePathTests {
    @Test func pathsAreDecodedOnceSplitAndNormalised() throws {
        #expect(try FilePath(encoded: "a/b%20c/d.txt").names == ["a", "b c", "d.txt"])
        #expect(try FilePath(encoded: "/a//b/").names == ["a", "b"])
        #expect(try FilePath(encoded: "a%2Fb").names == ["a", "b"])
        #expect(try FilePath(encoded: "").isRoot)
        // "é" decomposed (e + combining acute) and precomposed name the same file.
        #expect(try FilePath(encoded: "caf%65%CC%81") == FilePath(encoded: "caf%C3%A9"))
        #expect(try FilePath(encoded: "100%25.txt").name == "100%.txt")
        let path = try FilePath(encoded: "a/b/c")
        #expect(path.parent.description == "a/b")
        #expect(path.ancestors.map(\.description) == ["a", "a/b"])
        #expect(path.isWithin(try FilePath(encoded: "a")))
        #expect(!path.isWithin(try FilePath(encoded: "a/bc")))
    }

    /// Every spelling of an escape, each refused with 6006.
    static let hostile: [String] = [
        "..", "../x", "a/../../x", "a/..", ".", "./x", "%2e%2e", "%2E%2E/x", "a/%2e%2e/%2e%2e/x", "%2e", "..%2fx",
        "%2e%2e%2fx", "%2e%2e%5cx", "..%5cx", "a\\b", "%5c", "..\\..\\x", "C:%5cwindows", "a%00b", "%00", "x%0a",
        "x%0d%0ay", "%1f", "%7f", "%c2%85", "%c0%ae%c0%ae/x", "%c0%af", "%e0%80%ae", "%ff", "%c0", "%", "%2", "%zz",
        "%252e%252e/x", "%252f", "a%255cb", "%25c0%25ae", "%25e0", String(repeating: "n", count: 256),
        Array(repeating: String(repeating: "d", count: 200), count: 6).joined(separator: "/"),
    ]

    @Test(arguments: hostile) func hostilePathsAreRefused(_ raw: String) {
        #expect(throws: ErrorEnvelope.self) { _ = try FilePath(encoded: raw) }
        do {
            _ = try FilePath(encoded: raw)
        } catch {
            #expect(error.code == 6006 && error.status == 400, "\(raw): \(error)")
        }
    }

    @Test func namesAppendedAreCheckedToo() throws {
        let directory = try FilePath(encoded: "docs")
        #expect(try directory.appending("a.txt").description == "docs/a.txt")
        #expect(throws: ErrorEnvelope.self) { try directory.appending("..") }
        #expect(throws: ErrorEnvelope.self) { try directory.appending("a/b") }
    }

    @Test func globsBecomeEscapedLikePatterns() {
        #expect(Glob.likePattern("*.txt") == "%.txt")
        #expect(Glob.likePattern("a?c") == "a_c")
        #expect(Glob.likePattern("100%_\\*") == "100\\%\\_\\\\%")
    }

    @Test func rangesAreReadAsRFC9110Says() {
        #expect(ByteRange.parse("bytes=0-9", size: 100) == .part(0..<10))
        #expect(ByteRange.parse("bytes=90-", size: 100) == .part(90..<100))
        #expect(ByteRange.parse("bytes=-10", size: 100) == .part(90..<100))
        #expect(ByteRange.parse("bytes=-200", size: 100) == .part(0..<100))
        #expect(ByteRange.parse("bytes=50-500", size: 100) == .part(50..<100))
        #expect(ByteRange.parse("bytes=100-", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,5-6", size: 100) == .whole)
        #expect(ByteRange.parse("bytes=9-1", size: 100) == .whole)
        #expect(ByteRange.parse("items=0-1", size: 100) == .whole)
        #expect(ByteRange.parse(nil, size: 100) == .whole)
    }

    @Test func httpDatesRoundTrip() {
        #expect(HTTPDate.format(milliseconds: 784_111_777_000) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("yesterday") == nil)
    }
}
